import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_BUCKET } from "../../infra/local/drop-folder";
import { startLocalPostgres } from "../../infra/local/postgres";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { docxBomb } from "../support/documents";

// End to end: hostile files dropped into a running local stack are skipped
// with their reasons while the API keeps answering, and a restart neither dies on them nor
// processes them again.

const dataDir = mkdtempSync(join(tmpdir(), "agent-hostile-"));
const env = {
  DATA_DIR: dataDir,
  PORT: "0",
  LOG_LEVEL: "SILENT",
  INGEST_MAX_UNZIPPED_BYTES: String(1024 * 1024),
  INGEST_MAX_CHUNKS: "300",
};
let stack: LocalStack;
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function documents() {
  const db = await startLocalPostgres(join(dataDir, "postgres"));
  try {
    return new Map((await new RpcAgentStore(sqlRpc(db)).listDocuments(LOCAL_BUCKET)).map((d) => [d.source, d]));
  } finally {
    await db.close();
  }
}

it("skips hostile documents with their reasons, keeps answering, and does not reprocess them after a restart", async () => {
  stack = await startLocalStack(env);
  await stack.dropFolderReconciled;
  await stack.queues.ingest.drained(60_000); // the sample knowledge base
  const drop = (name: string, body: string | Uint8Array) => writeFileSync(join(stack.dropDir, name), body);
  drop("bomb.docx", await docxBomb(8_000_000));
  drop("huge.txt", "Shipping to the moon takes a while. ".repeat(60_000)); // ~2 MB: thousands of chunks
  drop("nul.md", "# Notes\nhalf\u0000binary");
  drop("deep.json", `${"[".repeat(150_000)}"the bottom of the well"${"]".repeat(150_000)}`);
  execFileSync("mkfifo", [join(stack.dropDir, "pipe.md")]);
  drop("fine.md", "The emerald kestrel nests in the Orvane hills.");

  // The API answers while they are ingested.
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${stack.url}/api/chat`, { method: "POST", body: JSON.stringify({ message: `hi ${i}` }) });
    expect(res.status).toBe(200);
  }
  const ask = async () =>
    (
      (await (
        await fetch(`${stack.url}/api/chat`, {
          method: "POST",
          body: JSON.stringify({ message: "where does the emerald kestrel nest?" }),
        })
      ).json()) as { reply: string }
    ).reply;
  const deadline = Date.now() + 60_000;
  while (!(await ask()).includes("Orvane")) {
    if (Date.now() > deadline) throw new Error("fine.md was never ingested");
    await new Promise((r) => setTimeout(r, 200));
  }
  await stack.queues.ingest.drained(60_000);
  expect(stack.queues.ingestDeadLetters.depth).toBe(0);
  await stack.close();

  const first = await documents();
  expect(first.get("bomb.docx")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/inflate/) });
  expect(first.get("huge.txt")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/chunks/) });
  expect(first.get("nul.md")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/NUL/) });
  expect(first.get("deep.json")).toMatchObject({ status: "ingested", chunkCount: 1 });
  expect(first.get("fine.md")).toMatchObject({ status: "ingested" });
  expect(first.has("pipe.md")).toBe(false); // never an object

  // A restart: nothing changed, so nothing is sent, and the bomb is not opened again.
  stack = await startLocalStack(env);
  await stack.dropFolderReconciled;
  expect(stack.queues.ingest.depth).toBe(0);
  await stack.close();
  const second = await documents();
  expect(second.get("bomb.docx")!.updatedAt).toBe(first.get("bomb.docx")!.updatedAt);
  stack = undefined as unknown as LocalStack;
}, 180_000);
