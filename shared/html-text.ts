import { convert } from "html-to-text";

const HIDDEN = [
  "template",
  "noscript",
  "[hidden]",
  '[aria-hidden="true" i]',
  ...["display:none", "display: none", "display :none", "visibility:hidden", "visibility: hidden"].map(
    (style) => `[style*="${style}" i]`,
  ),
];

/**
 * The text a reader sees in HTML: tags dropped, every entity decoded once, paragraphs and line
 * breaks as newlines, link targets and images left out. What a reader never sees is left out too:
 * hidden text is a way to put words in the agent's mouth (a knowledge source's, a message's). Best
 * effort: the common markings only (a stylesheet's classes are not read). html-to-text walks the
 * tree by recursion, so HTML nested tens of thousands deep throws a RangeError.
 */
export function textOfHtml(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      ...HIDDEN.map((selector) => ({ selector, format: "skip" })),
    ],
  });
}

/** Plain text as HTML that shows it as written: markup characters escaped, line breaks kept. */
export function htmlOfText(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/\r?\n/g, "<br>");
}
