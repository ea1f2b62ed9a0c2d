import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { classify, type Command, missingLines, transcript } from "../support/doc-blocks";
import { localStackForTests } from "../support/local-stack";
import { type CodeBlock, codeBlocks, DOC_PAGES, REPO } from "../support/markdown";

/*
 * Docs that run. Every fenced shell block of README.md and docs/*.md is run here, in bash with
 * `set -euo pipefail`, against one fresh local stack, and must exit 0. A block is marked by its
 * fence's info string:
 *
 *   ```sh                  runs here: what a reader types against `npm start`.
 *   ```sh aws              needs an AWS account (a deployment, the aws CLI, Supabase's): not run.
 *   ```sh skip <reason>    not run, for the reason given: it installs something, starts the stack
 *                          (this file starts its own), or runs tests or benchmarks (this file is a
 *                          test; the suite runs those).
 *   ```ts ```tsx ```text ```json
 *                          not shell: not run.
 *
 * Any other fence (bare ```, ```bash, ```console, ```sh with another word, a skip without its
 * reason) fails "every code block of the docs is marked", so a new block cannot go untested by
 * omission.
 *
 * A runnable block runs as a reader at a terminal runs it:
 * - from the repository's root, beside the stack `npm start` runs. That stack listens on a free port
 *   here, not 3000: every `localhost:3000` in a block is its address, and PORT and DATA_DIR are its
 *   own (`npm run kb` finds it by PORT, as it finds `npm start`'s);
 * - the blocks of a page run in order, in one shell session: a variable or function one block sets
 *   is there in the page's later blocks. Pages share nothing, and each page names its own users,
 *   so they do not depend on one another or on their order;
 * - a block whose lines start with `$ ` is a transcript: each `$ ` line (with the lines it continues
 *   by a trailing backslash) is a command, and the lines up to the next `$ ` are what it prints.
 *   Each command's output must show them, in order, loosely (test/support/doc-blocks.ts): `…`
 *   stands for any text, and lines the doc leaves out may come between. A block without `$ ` runs
 *   as written and only its exit status counts.
 */

const run = promisify(execFile);
const local = localStackForTests("runnable-docs");
const work = mkdtempSync(join(tmpdir(), "runnable-docs-"));

beforeAll(async () => {
  await local.stack.dropFolderReconciled;
  // By the time a reader types, their new stack has ingested the sample knowledge base.
  await vi.waitFor(
    async () => {
      const response = await fetch(`${local.stack.url}/api/knowledge/documents`, {
        headers: { "x-user-id": "docs", "x-user-role": "admin" },
      });
      const { documents } = (await response.json()) as { documents: { status: string }[] };
      expect(documents.filter((d) => d.status === "ingested")).toHaveLength(4);
    },
    { timeout: 30_000, interval: 200 },
  );
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Each block's bash starts fresh, takes the variables and functions its page's earlier blocks left
// in the page's state file, and leaves its own there: one shell session a page.
const LOAD_STATE = `__docs_known=" $(compgen -v | tr '\\n' ' ') "
if [ -f "$DOCS_STATE" ]; then source "$DOCS_STATE"; fi`;
const SAVE_STATE = `for __docs_name in $(compgen -v); do
  case "$__docs_known" in *" $__docs_name "*) continue ;; esac
  case "$__docs_name" in __docs_*|BASH_*|FUNCNAME|PIPESTATUS|_) continue ;; esac
  declare -p "$__docs_name"
done > "$DOCS_STATE"
declare -f >> "$DOCS_STATE"`;

/** The block as bash runs it: a transcript's commands each print to their own file. */
const script = (block: CodeBlock, commands: Command[] | undefined, outputs: string) =>
  [
    LOAD_STATE,
    "set -euo pipefail",
    `cd "${REPO}"`,
    commands ? commands.map((c, i) => `{\n${c.text}\n} > "${outputs}/${i}"`).join("\n") : block.lines.join("\n"),
    SAVE_STATE,
  ].join("\n");

async function runBlock(block: CodeBlock, state: string) {
  const port = new URL(local.stack.url).port;
  const commands = transcript(block.lines);
  const outputs = mkdtempSync(join(work, "out-"));
  const here = (text: string) => text.replace(/\b(localhost|127\.0\.0\.1):3000\b/g, `localhost:${port}`);
  const source = here(script(block, commands, outputs));
  // The reader's own settings of the kb CLI would send it elsewhere.
  const { KB_API_URL: _api, KB_TOKEN: _token, ...inherited } = process.env;
  const env = { ...inherited, PORT: port, DATA_DIR: dirname(local.stack.dropDir), DOCS_STATE: state };
  try {
    await run("bash", ["-c", source], { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`exit ${(err as { code?: unknown }).code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  }
  for (const [i, command] of (commands ?? []).entries()) {
    const output = readFileSync(join(outputs, String(i)), "utf8");
    expect(
      missingLines(command.shown.map(here), output),
      `$ ${command.text}\nprinted:\n${output}\nand not the lines`,
    ).toEqual([]);
  }
}

const pages = DOC_PAGES.map((page) => ({ page, blocks: codeBlocks(page) }));

describe("every code block of the docs is marked", () => {
  it.each(pages)("$page", ({ blocks }) => {
    const unmarked = blocks.flatMap((block) => {
      const kind = classify(block);
      return kind.kind === "unmarked" ? [`${block.page}:${block.line}: ${kind.error}`] : [];
    });
    expect(unmarked).toEqual([]);
  });
});

for (const { page, blocks } of pages) {
  const runnable = blocks.filter((block) => classify(block).kind === "runnable");
  if (runnable.length === 0) continue;
  describe(`the shell blocks of ${page}, against a fresh local stack`, () => {
    const state = join(work, `${page.replaceAll("/", "_")}.state`);
    it.each(runnable.map((block) => [`${page}:${block.line}`, block] as const))(
      "%s",
      (_, block) => runBlock(block, state),
      90_000,
    );
  });
}
