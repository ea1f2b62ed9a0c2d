import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { anchorsOf, DOC_PAGES, readPage, REPO } from "../support/markdown";

// The docs link to each other and to the repository's files, never outside it: every relative
// link of README.md and docs/*.md names a file that exists in the repository, and a heading that
// exists when it names one.

/** A page's lines outside fenced blocks, each with its line number. */
function* proseLines(text: string): Generator<[line: string, number: number]> {
  let inFence = false;
  for (const [index, line] of text.split("\n").entries()) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) inFence = !inFence;
    else if (!inFence) yield [line, index + 1];
  }
}

/** A page's links outside code: inline code spans and fenced blocks are not links. */
function linksOf(text: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const [line, number] of proseLines(text))
    for (const match of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ target: match[1]!, line: number });
  return links;
}

const relativeLinks = DOC_PAGES.flatMap((page) =>
  linksOf(readPage(page))
    .filter(({ target }) => !/^[a-z][a-z+.-]*:/i.test(target))
    .map(({ target, line }) => [`${page}:${line} ${target}`, page, target] as const),
);

describe("the docs' links", () => {
  it("are found on the pages (the README links to every page of docs/)", () => {
    const fromReadme = relativeLinks.filter(([, page]) => page === "README.md").map(([, , t]) => t.split("#")[0]);
    expect(fromReadme).toEqual(expect.arrayContaining(DOC_PAGES.filter((p) => p !== "README.md")));
  });

  it.each(relativeLinks)("%s resolves inside the repository", (_, page, target) => {
    const [path = "", anchor] = target.split("#");
    const file = path === "" ? join(REPO, page) : resolve(REPO, dirname(page), decodeURIComponent(path));
    expect(relative(REPO, file).startsWith(".."), `${target} points outside the repository`).toBe(false);
    expect(existsSync(file), `${target}: no such file`).toBe(true);
    if (anchor !== undefined && file.endsWith(".md"))
      expect([...anchorsOf(readPage(relative(REPO, file)))], `${target}: no such heading`).toContain(anchor);
  });
});

/** The repository paths a page names in inline code (`graph/tools/registry.ts`), outside fences. */
function pathsNamedIn(text: string): { path: string; line: number }[] {
  const paths: { path: string; line: number }[] = [];
  for (const [line, number] of proseLines(text))
    for (const [, span] of line.matchAll(/`([^`\s]+)`/g)) {
      // A path of the repository's own folders, not a pattern or a placeholder (`*.unit.test.ts`, `<name>`).
      if (/^(infra|functions|graph|shared|test|supabase|docs|examples)\/[\w./-]+$/.test(span!))
        paths.push({ path: span!.replace(/[.:]$/, ""), line: number });
    }
  return paths;
}

const namedPaths = DOC_PAGES.flatMap((page) =>
  pathsNamedIn(readPage(page)).map(({ path, line }) => [`${page}:${line} ${path}`, path] as const),
);

/**
 * Folders .gitignore names (a build's output, such as the playground's `dist/`): a fresh clone has
 * none of them until something builds it, so a page naming one names an output, not a file.
 */
const IGNORED_FOLDERS = readFileSync(join(REPO, ".gitignore"), "utf8")
  .split("\n")
  .filter((line) => /^[\w./-]+\/$/.test(line.trim()))
  .map((line) => line.trim());

describe("the repository paths the docs name", () => {
  it.each(namedPaths)("%s exists", (_, path) => {
    if (IGNORED_FOLDERS.some((folder) => `${path}/`.startsWith(folder))) return;
    expect(existsSync(join(REPO, path)), `${path}: no such file or folder`).toBe(true);
  });
});
