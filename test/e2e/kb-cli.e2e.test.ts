import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { main } from "../../infra/kb/cli";
import { localStackForTests } from "../support/local-stack";

// `npm run kb` against the local stack `npm start` runs: push, ls, show, rm and search.
const EXAMPLES = resolve(import.meta.dirname, "../../examples/knowledge");
const local = localStackForTests("agent-kb-cli");
beforeAll(() => local.stack.dropFolderReconciled);

async function kbWith(env: Record<string, string>, ...argv: string[]) {
  const lines: string[] = [];
  const code = await main(argv, { out: (line) => lines.push(line), err: new PassThrough(), env });
  return { code, output: lines.join("\n") };
}
const kb = (...argv: string[]) => kbWith({ KB_API_URL: local.stack.url }, ...argv);

const ask = async (message: string) => {
  const res = await fetch(`${local.stack.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message }),
  });
  return ((await res.json()) as { reply: string }).reply;
};

const row = (output: string, source: string) => output.split("\n").find((l) => l.startsWith(`${source} `)) ?? "";

describe("npm run kb", () => {
  it("pushes a folder, reporting each document ingested with its chunks, and a second push uploads nothing", async () => {
    // The stack seeds the same examples on first start: removed first, so this push uploads them.
    for (const name of ["getting-started.md", "offline-sync.md", "pricing.md", "refunds.md"]) {
      expect((await kb("rm", name)).code).toBe(0);
    }
    const first = await kb("push", EXAMPLES);
    expect(first.code).toBe(0);
    for (const name of ["getting-started.md", "offline-sync.md", "pricing.md", "refunds.md"]) {
      expect(row(first.output, name)).toMatch(new RegExp(`^${name}\\s+ingested\\s+[1-9]\\d*\\s+yes`));
    }
    expect(first.output).toContain("4 uploaded, 0 unchanged");

    const second = await kb("push", EXAMPLES);
    expect(second.code).toBe(0);
    expect(second.output).toContain("0 uploaded, 4 unchanged");
    expect(row(second.output, "pricing.md")).toMatch(/ingested\s+\d+\s+no \(unchanged\)/);
  });

  it("shows, searches, and removes a document so its answer disappears", async () => {
    const shown = await kb("show", "pricing.md");
    expect(shown.output).toMatch(/^pricing\.md: ingested, \d+ bytes, text\/markdown/);
    const found = await kb("search", "how much does the Pro plan cost?");
    expect(found.output.split("\n")[2]).toMatch(/^\d\.\d{4}\s+pricing\.md\s/);

    expect(await ask("how much does the Pro plan cost?")).toMatch(/pricing\.md/);
    expect((await kb("rm", "pricing.md")).output).toBe("removed pricing.md");
    expect(await ask("how much does the Pro plan cost?")).not.toMatch(/pricing\.md/);
    expect((await kb("ls")).output).not.toMatch(/^pricing\.md /m);
  });

  it("shows a corrupt PDF as failed with its reason in ls and in the documents API", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kb-bad-"));
    writeFileSync(join(dir, "broken.pdf"), "%PDF-1.7\nnot really a PDF");
    const pushed = await kb("push", join(dir, "broken.pdf"));
    expect(pushed.code).toBe(1);
    expect(row(pushed.output, "broken.pdf")).toMatch(/failed|skipped/);
    const listed = await kb("ls");
    expect(row(listed.output, "broken.pdf")).toMatch(/(failed|skipped)\s.*\S/);
    const api = await fetch(`${local.stack.url}/api/knowledge/documents`, {
      headers: { "x-user-id": "ops", "x-user-role": "admin" },
    });
    const doc = (
      (await api.json()) as { documents: { source: string; status: string; reason?: string }[] }
    ).documents.find((d) => d.source === "broken.pdf");
    expect(doc).toMatchObject({ status: expect.stringMatching(/failed|skipped/), reason: expect.stringMatching(/\w/) });
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds the stack on PORT, as `npm start` does, when neither --api nor KB_API_URL names it", async () => {
    const { port } = new URL(local.stack.url);
    const listed = await kbWith({ PORT: port }, "ls");
    expect(listed.code).toBe(0);
    expect(listed.output).toMatch(/^getting-started\.md\s/m);
    // Nothing listens on port 1: the error names the URL it tried, so the reader sees which.
    const refused = await kbWith({ PORT: "1" }, "ls");
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/is the API at http:\/\/localhost:1 running\?/);
  });

  it("pushes a JSON list of {source, content}, and explains bad usage with exit code 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kb-json-"));
    const file = join(dir, "docs.json");
    writeFileSync(
      file,
      JSON.stringify([{ source: "https://example.com/faq", content: "# FAQ\n\nThe quokka plan is free." }]),
    );
    const pushed = await kb("push", "--json", file);
    expect(pushed.code).toBe(0);
    expect(row(pushed.output, "example.com/faq.md")).toMatch(/ingested\s+1\s+yes/);
    expect((await kb()).code).toBe(2);
    expect((await kb("frobnicate")).output).toMatch(/unknown command "frobnicate"/);
    expect((await kb("show")).code).toBe(2);
    writeFileSync(file, JSON.stringify({ not: "a list" }));
    await expect(kb("push", "--json", file)).rejects.toThrow(/must hold a list/);
    rmSync(dir, { recursive: true, force: true });
  });
});
