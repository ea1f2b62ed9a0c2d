import { convert } from "html-to-text";
import { Parser } from "htmlparser2";

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

/** Thrown from the parser's callback to stop it at the first element past the limit. */
class PastTheLimit extends Error {}

/**
 * Whether HTML's elements nest more than `max` deep, as htmlparser2 (which html-to-text converts
 * with) nests them: its own parser, with no tree built, counting each element it opens and each
 * it closes, implied closes included, and stopping at the first element past `max`. A count of
 * tags by pattern disagreed with it both ways (a stray `</x>`, an end tag inside a comment, or
 * `<li><dd>` let deep HTML through; SVG's self-closed paths were refused).
 */
function nestedDeeperThan(html: string, max: number): boolean {
  let depth = 0;
  const parser = new Parser({
    onopentag() {
      if (++depth > max) throw new PastTheLimit();
    },
    onclosetag() {
      depth -= 1;
    },
  });
  try {
    parser.end(html);
  } catch (err) {
    if (err instanceof PastTheLimit) return true;
    throw err;
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
