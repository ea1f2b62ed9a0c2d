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
 * effort: the common markings only (a stylesheet's classes are not read). HTML nested more than
 * MAX_HTML_DEPTH deep throws HtmlTooDeep (a RangeError, as html-to-text's recursion would).
 */
export function textOfHtml(html: string): string {
  if (nestedDeeperThan(html, MAX_HTML_DEPTH))
    throw new HtmlTooDeep(`its elements are nested more than ${MAX_HTML_DEPTH} deep`);
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      ...HIDDEN.map((selector) => ({ selector, format: "skip" })),
    ],
  });
}

/**
 * How deep HTML may nest to be read. Converting takes time growing with the square of the depth
 * (200,000 nested elements took 35 s on the thread, past any deadline check), and real pages
 * nest a few dozen deep.
 */
export const MAX_HTML_DEPTH = 500;

/** HTML deeper than MAX_HTML_DEPTH: a RangeError, as the conversion's own stack overflow is. */
export class HtmlTooDeep extends RangeError {
  override readonly name = "HtmlTooDeep";
}

/** Elements that open nothing: void ones, which have no end tag. */
const VOID_ELEMENTS = new Set([..."area base br col embed hr img input link meta param source track wbr".split(" ")]);
/**
 * Elements whose end tag may be left out: the next of their kind closes them (HTML's rules, and
 * htmlparser2's, which html-to-text uses), so a long list of them is not a deep one.
 */
const SELF_CLOSING_SIBLINGS = new Set([..."p li dt dd tr td th option optgroup rb rt rp".split(" ")]);

/**
 * Whether HTML's elements nest more than `max` deep, counted in one pass over its tags (a bound,
 * not a parse: a tag inside a comment or a script counts, which can only refuse more). Hand-written:
 * the parsers build the tree this check exists to avoid building.
 */
function nestedDeeperThan(html: string, max: number): boolean {
  let depth = 0;
  for (const [, closing, name] of html.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*>/g)) {
    const element = name!.toLowerCase();
    // `<span/>` is not closed in HTML (the parser reads it as `<span>`): it counts.
    if (VOID_ELEMENTS.has(element) || SELF_CLOSING_SIBLINGS.has(element)) continue;
    if (closing) depth = Math.max(0, depth - 1);
    else if (++depth > max) return true;
  }
  return false;
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
