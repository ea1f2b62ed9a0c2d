import type { PGlite } from "@electric-sql/pglite";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIngestHandler } from "../../../functions/ingest";
import { LOCAL_BUCKET } from "../../../infra/local/drop-folder";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { queueWithDeadLetters } from "../../../infra/local/queue";
import { s3Notification } from "../../../infra/local/s3-events";
import { loadConfig } from "../../../shared/config";
import { Ingestor } from "../../../shared/ingest/ingestor";
import { ingestSettings } from "../../../shared/ingest/runtime";
import { FolderObjectSource } from "../../../shared/ingest/object-source";
import type { S3ObjectEvent } from "../../../shared/ingest/s3-events";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { tinyDocx, tinyPdf } from "../../support/documents";

let db: PGlite;
let store: RpcAgentStore;
let dir: string;
let ingestor: Ingestor;
const settings = {
  ...ingestSettings(loadConfig({})),
  maxBytes: 64 * 1024,
  chunkSize: 400,
  chunkOverlap: 50,
  embedBatchSize: 4,
  embedConcurrency: 2,
};

beforeAll(async () => {
  db = await startLocalPostgres();
  store = new RpcAgentStore(sqlRpc(db));
  dir = mkdtempSync(join(tmpdir(), "drop-"));
  ingestor = new Ingestor({
    source: new FolderObjectSource(dir),
    store,
    embeddings: new HashingEmbeddings(1024),
    settings,
  });
}, 60_000);
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const created = (key: string, sequencer: string, size?: number): S3ObjectEvent => ({
  kind: "created",
  bucket: "docs",
  key,
  sequencer,
  size,
});
const removed = (key: string, sequencer: string): S3ObjectEvent => ({
  kind: "removed",
  bucket: "docs",
  key,
  sequencer,
});
const chunksOf = async (key: string) =>
  (
    await db.query<{ content: string }>(
      "select content from knowledge_chunks where document_id = $1 order by chunk_index",
      [`docs/${key}`],
    )
  ).rows.map((r) => r.content);
const search = async (q: string) =>
  (await store.matchKnowledge({ text: q, embedding: new HashingEmbeddings(1024).embed(q), limit: 1 }))[0];

describe("ingesting S3 object events", () => {
  it("ingests a document with a space in its name, searchable with the key as source", async () => {
    writeFileSync(join(dir, "red flower.md"), "# Flora\nThe red flower blooms under a violet moon.\n");
    expect(await ingestor.handle(created("red flower.md", "0100"))).toEqual({ action: "replaced", chunks: 1 });
    expect(await search("when does the red flower bloom")).toMatchObject({
      source: "red flower.md",
      documentId: "docs/red flower.md",
    });
  });

  it("ignores a redelivered event and an older event arriving late", async () => {
    writeFileSync(join(dir, "policy.md"), "Version two of the policy.");
    expect(await ingestor.handle(created("policy.md", "0200"))).toMatchObject({ action: "replaced" });
    expect(await ingestor.handle(created("policy.md", "0200"))).toMatchObject({ action: "stale" });
    writeFileSync(join(dir, "policy.md"), "Version one of the policy.");
    expect(await ingestor.handle(created("policy.md", "01FF"))).toMatchObject({ action: "stale" });
    // Sequencers of different lengths compare after right-padding the shorter with zeros.
    expect(await ingestor.handle(created("policy.md", "01FFFFFF"))).toMatchObject({ action: "stale" });
    expect(await chunksOf("policy.md")).toEqual(["Version two of the policy."]);
  });

  it("replaces a changed document's chunks and deletes a removed one, and a late create cannot resurrect it", async () => {
    writeFileSync(join(dir, "faq.md"), "Old answer. ".repeat(100));
    await ingestor.handle(created("faq.md", "0300"));
    expect((await chunksOf("faq.md")).length).toBeGreaterThan(1);
    writeFileSync(join(dir, "faq.md"), "New answer.");
    await ingestor.handle(created("faq.md", "0301"));
    expect(await chunksOf("faq.md")).toEqual(["New answer."]);
    unlinkSync(join(dir, "faq.md"));
    expect(await ingestor.handle(removed("faq.md", "0302"))).toEqual({ action: "deleted" });
    expect(await chunksOf("faq.md")).toEqual([]);
    expect(await ingestor.handle(created("faq.md", "0301"))).toMatchObject({ action: "stale" });
    expect(await chunksOf("faq.md")).toEqual([]);
  });

  // A removed event names a version, not the key: in a versioned bucket, deleting an old version,
  // or the delete marker (to restore the object), leaves an object under the key.
  it("keeps (or brings back) the object a removed event left under its key, and deletes once none is", async () => {
    writeFileSync(join(dir, "ver.md"), "Version one.");
    await ingestor.handle(created("ver.md", "0310"));
    writeFileSync(join(dir, "ver.md"), "Version two.");
    await ingestor.handle(created("ver.md", "0311"));
    expect(await ingestor.handle(removed("ver.md", "0312"))).toMatchObject({ action: "replaced" });
    expect(await chunksOf("ver.md")).toEqual(["Version two."]);
    // Read with what the key holds now: its ETag, as a created event would carry it.
    expect((await store.listDocuments("docs")).find((d) => d.source === "ver.md")).toMatchObject({
      deleted: false,
      etag: createHash("md5").update("Version two.").digest("hex"),
    });
    unlinkSync(join(dir, "ver.md"));
    expect(await ingestor.handle(removed("ver.md", "0313"))).toEqual({ action: "deleted" });
    expect(await chunksOf("ver.md")).toEqual([]);
    writeFileSync(join(dir, "ver.md"), "Version two.");
    expect(await ingestor.handle(removed("ver.md", "0314"))).toMatchObject({ action: "replaced" });
    expect(await chunksOf("ver.md")).toEqual(["Version two."]);
  });

  it("ingests PDF and DOCX", async () => {
    writeFileSync(join(dir, "guide.pdf"), tinyPdf("The warranty lasts two years"));
    writeFileSync(join(dir, "terms.docx"), await tinyDocx(["Shipping is free above fifty euros."]));
    expect(await ingestor.handle(created("guide.pdf", "0400"))).toEqual({ action: "replaced", chunks: 1 });
    expect(await ingestor.handle(created("terms.docx", "0400"))).toEqual({ action: "replaced", chunks: 1 });
    expect((await search("how long is the warranty"))?.source).toBe("guide.pdf");
    expect((await search("is shipping free"))?.source).toBe("terms.docx");
  });

  it("skips oversized, unsupported and corrupt files with a reason, and a vanished one as missing", async () => {
    writeFileSync(join(dir, "big.txt"), "x".repeat(settings.maxBytes + 1));
    expect(await ingestor.handle(created("big.txt", "0500", settings.maxBytes + 1))).toMatchObject({
      action: "skipped",
      reason: /over the 65536-byte limit/,
    });
    expect(await ingestor.handle(created("big.txt", "0500"))).toMatchObject({ action: "skipped", reason: /over the/ });
    writeFileSync(join(dir, "photo.png"), "png");
    expect(await ingestor.handle(created("photo.png", "0500"))).toMatchObject({
      action: "skipped",
      reason: /unsupported type/,
    });
    writeFileSync(join(dir, "broken.pdf"), "%PDF-1.7 not really");
    expect(await ingestor.handle(created("broken.pdf", "0500"))).toMatchObject({
      action: "skipped",
      reason: /PDF cannot be read/,
    });
    expect(await ingestor.handle(created("gone.md", "0500"))).toEqual({ action: "missing" });
    // Every key under the prefix is announced: a type never read is skipped by its name, unread.
    expect(await ingestor.handle(created(".DS_Store", "0500"))).toMatchObject({
      action: "skipped",
      reason: 'unsupported type ".ds_store"',
    });
  });

  it("replaces atomically: a failing replacement leaves the previous chunks in place", async () => {
    writeFileSync(join(dir, "atomic.md"), "Stable content.");
    await ingestor.handle(created("atomic.md", "0600"));
    const broken = [{ index: 0, content: "new", metadata: {}, embedding: [1, 2, 3] }]; // wrong width: the insert fails
    await expect(
      store.replaceDocument({ documentId: "docs/atomic.md", source: "atomic.md", sequencer: "0601" }, broken),
    ).rejects.toThrow();
    expect(await chunksOf("atomic.md")).toEqual(["Stable content."]);
  });
});

describe("ingest handler", () => {
  it("fails only the malformed record of a batch and handles the test event", async () => {
    writeFileSync(join(dir, "ok.md"), "Fine document.");
    const handler = createIngestHandler(async () => ({
      ingestor: new Ingestor({
        source: new FolderObjectSource(dir),
        store,
        embeddings: new HashingEmbeddings(1024),
        settings,
      }),
    }));
    const { queue, deadLetters: dlq } = queueWithDeadLetters("ingest", {
      visibilityTimeoutMs: 20,
      pollIntervalMs: 5,
      maxReceiveCount: 2,
    });
    queue.send(
      s3Notification({
        eventName: "ObjectCreated:Put",
        bucket: LOCAL_BUCKET,
        key: "ok.md",
        size: 14,
        sequencer: "0700",
      }),
    );
    queue.send(JSON.stringify({ Event: "s3:TestEvent", Service: "Amazon S3" }));
    queue.send('{"Records": "nope"}');
    queue.start(handler);
    await queue.drained();
    await queue.stop();
    expect(dlq.peek().map((m) => m.body)).toEqual(['{"Records": "nope"}']);
    const rows = await db.query("select 1 from knowledge_chunks where document_id = $1", [`${LOCAL_BUCKET}/ok.md`]);
    expect(rows.rows).toHaveLength(1);
  });
});
