import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The repository's root, and the Markdown pages a reader follows: the README and docs/. */
export const REPO = resolve(import.meta.dirname, "../..");
export const DOC_PAGES = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

export const readPage = (page: string) => readFileSync(join(REPO, page), "utf8");

export interface CodeBlock {
  page: string;
  /** 1-based line of the opening fence */
  line: number;
  /** the fence's info string, trimmed: "sh", "sh aws", "ts" … */
  info: string;
  /** its lines, the fence's indentation removed */
  lines: string[];
}

/**
 * The fenced code blocks of a page (``` or ~~~, indented or not, as CommonMark opens and closes
 * them). Hand-written because the pages need nothing else parsed: a Markdown library would build
 * a whole syntax tree to hand back these few fields.
 */
export function codeBlocks(page: string, text = readPage(page)): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: (CodeBlock & { fence: string; indent: number }) | undefined;
  text.split("\n").forEach((raw, index) => {
    if (open) {
      const close = /^( {0,3})(`{3,}|~{3,})\s*$/.exec(raw);
      if (close && close[2]![0] === open.fence[0] && close[2]!.length >= open.fence.length) {
        const { fence: _fence, indent: _indent, ...block } = open;
        blocks.push(block);
        open = undefined;
      } else open.lines.push(raw.slice(Math.min(open.indent, raw.length - raw.trimStart().length)));
      return;
    }
    const start = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(raw);
    if (start)
      open = { page, line: index + 1, info: start[3]!.trim(), lines: [], fence: start[2]!, indent: start[1]!.length };
  });
  if (open) throw new Error(`${page}:${open.line}: a code block that is never closed`);
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export const headingAnchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The anchors a page's headings make (outside code blocks), repeated ones numbered as GitHub does. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = headingAnchor(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
