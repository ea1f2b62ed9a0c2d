import { classify, missingLines, transcript } from "../support/doc-blocks";
import { anchorsOf, codeBlocks } from "../support/markdown";

// The doc test (runnable-docs.e2e.test.ts) is only as strict as these pieces: how it finds blocks,
// how it reads their marks, and how loosely a shown output may match.

const block = (info: string) => ({ page: "p.md", line: 1, info, lines: [] });

describe("the docs' code blocks", () => {
  it("are found with their line, info string and lines, indented ones too", () => {
    const page = [
      "# T",
      "",
      "```sh",
      "echo a",
      "```",
      "- item",
      "  ```sh aws",
      "  aws s3 ls",
      "  ```",
      "~~~text",
      "x",
      "~~~",
    ];
    expect(codeBlocks("p.md", page.join("\n"))).toEqual([
      { page: "p.md", line: 3, info: "sh", lines: ["echo a"] },
      { page: "p.md", line: 7, info: "sh aws", lines: ["aws s3 ls"] },
      { page: "p.md", line: 10, info: "text", lines: ["x"] },
    ]);
    expect(() => codeBlocks("p.md", "```sh\necho never closed")).toThrow(/p\.md:1: .*never closed/);
  });

  it("are runnable, not run with a reason, or unmarked", () => {
    expect(classify(block("sh"))).toEqual({ kind: "runnable" });
    expect(classify(block("sh aws"))).toEqual({ kind: "not run", why: "needs AWS" });
    expect(classify(block("sh skip starts the stack"))).toEqual({ kind: "not run", why: "starts the stack" });
    expect(classify(block("ts"))).toMatchObject({ kind: "not run" });
    for (const info of ["", "bash", "console", "shell", "sh skip", "sh aws please", "sh local", "ts aws"])
      expect(classify(block(info)), info).toMatchObject({ kind: "unmarked" });
  });
});

describe("a transcript", () => {
  it("is a command per `$ ` line, continued by backslashes, with the lines shown after it", () => {
    expect(transcript(["$ a \\", "    b", "out 1", "out 2 \\", "$ c"])).toEqual([
      { text: "a \\\n    b", shown: ["out 1", "out 2 \\"] },
      { text: "c", shown: [] },
    ]);
    expect(transcript(["echo plain"])).toBeUndefined();
    expect(() => transcript(["stray", "$ a"])).toThrow(/before its first command/);
  });

  it("matches its output loosely: … for any text, spaces for spaces, left-out lines between", () => {
    const output = '\n> pkg@1 kb\n\nsource   status\npricing.md    ingested  3\n{"id":"42","ok":true}\n';
    expect(missingLines(["source status", "…", "pricing.md ingested 3", '{"id":"…","ok":true}'], output)).toEqual([]);
  });

  it("fails a shown line the output lacks, out of order, or only part of a line", () => {
    const output = "first\nsecond\n";
    expect(missingLines(["third"], output)).toEqual(["third"]);
    expect(missingLines(["second", "first"], output)).toEqual(["first"]);
    expect(missingLines(["sec"], output)).toEqual(["sec"]);
    expect(missingLines(["(.*)"], "anything")).toEqual(["(.*)"]);
  });
});

describe("a page's anchors", () => {
  it("are GitHub's: lower case, punctuation dropped, repeats numbered, headings in code ignored", () => {
    const page =
      "# The playground (`infra/playground/`)\n## 4. Intercom (optional)\n## Notes\n## Notes\n```sh\n# not a heading\n```";
    expect([...anchorsOf(page)]).toEqual(["the-playground-infraplayground", "4-intercom-optional", "notes", "notes-1"]);
  });
});
