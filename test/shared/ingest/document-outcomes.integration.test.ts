import type { PGlite } from "@electric-sql/pglite";
import { Logger } from "@aws-lambda-powertools/logger";
import type { Embeddings } from "@langchain/core/embeddings";
import type { SQSEvent } from "aws-lambda";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIngestHandler } from "../../../functions/ingest";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { LocalQueue } from "../../../infra/local/queue";
import { s3Notification } from "../../../infra/local/s3-events";
import { Ingestor, type IngestSettings } from "../../../shared/ingest/ingestor";
import { FolderObjectSource } from "../../../shared/ingest/object-source";
import type { S3ObjectEvent } from "../../../shared/ingest/s3-events";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { docxBomb, tinyDocx, tinyPdf } from "../../support/documents";
import { lambdaContext } from "../../../infra/local/api-gateway";

// Every document ends ingested, skipped (with its reason) or failed
// (with its error), recorded on its knowledge_documents row and logged with its key; and nothing
// a document holds can make extraction decompress, produce or take more than its bounds.

let db: PGlite;
let store: RpcAgentStore;
let dir: string;
const settings: IngestSettings = {
  maxBytes: 256 * 1024,
  chunkSize: 400,
  chunkOverlap: 50,
  embedBatchSize: 8,
  embedConcurrency: 2,
  maxTextChars: 60_000,
  maxUnzippedBytes: 1024 * 1024,
  maxPdfPages: 4,
  maxChunks: 120,
  timeoutMs: 10_000,
};
const ingestor = (overrides: Partial<IngestSettings> = {}, embeddings: Embeddings = new HashingEmbeddings(1024)) =>
  new Ingestor({ source: new FolderObjectSource(dir), store, embeddings, settings: { ...settings, ...overrides } });

beforeAll(async () => {
  db = await startLocalPostgres();
  store = new RpcAgentStore(sqlRpc(db));
  dir = mkdtempSync(join(tmpdir(), "outcomes-"));
}, 60_000);
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

let seq = 0x1000;
const created = (key: string): S3ObjectEvent => ({
  kind: "created",
  bucket: "docs",
  key,
  sequencer: (seq++).toString(16).toUpperCase(),
});
/** An ingestor whose embeddings take 40 ms a batch of 2, under a 150 ms time bound: a long document runs out of time. */
function slowIngestor() {
  const slow = new HashingEmbeddings(1024);
  const embed = slow.embedDocuments.bind(slow);
  slow.embedDocuments = async (texts) => {
    await new Promise((r) => setTimeout(r, 40));
    return embed(texts);
  };
  return ingestor({ timeoutMs: 150, embedConcurrency: 1, embedBatchSize: 2 }, slow);
}
const put = (key: string, body: string | Uint8Array) => writeFileSync(join(dir, key), body);
const row = async (key: string) =>
  (
    await db.query<{ status: string; reason: string | null; chunk_count: number }>(
      "select status, reason, chunk_count from knowledge_documents where document_id = $1",
      [`docs/${key}`],
    )
  ).rows[0];

describe("bounds on what a document may make extraction do", () => {
  it("skips a DOCX decompression bomb by what it inflates to, not by its size on disk", async () => {
    const bomb = await docxBomb(6_000_000); // ~6 MB of XML in ~20 KB of zip
    expect(bomb.length).toBeLessThan(settings.maxBytes);
    put("bomb.docx", bomb);
    const outcome = await ingestor().handle(created("bomb.docx"));
    expect(outcome).toMatchObject({ action: "skipped", reason: expect.stringMatching(/inflate|unzip/i) });
    expect(await row("bomb.docx")).toMatchObject({
      status: "skipped",
      reason: expect.stringMatching(/inflate|unzip/i),
    });
    // An ordinary DOCX under the same bounds still goes in.
    put("fine.docx", await tinyDocx(["Parcels ship within two days."]));
    expect(await ingestor().handle(created("fine.docx"))).toMatchObject({ action: "replaced", chunks: 1 });
  });

  it("skips text longer than the bound, however small its file", async () => {
    // 40 KB of HTML that renders to more text than the bound: a table of many short cells.
    put("wide.html", `<p>${"lorem ipsum dolor sit amet ".repeat(2600)}</p>`);
    expect(await ingestor().handle(created("wide.html"))).toMatchObject({
      action: "skipped",
      reason: expect.stringMatching(/character limit/),
    });
    expect((await row("wide.html"))?.status).toBe("skipped");
  });

  it("skips a PDF with more pages than the bound, and a document that splits into too many chunks", async () => {
    put("long.pdf", tinyPdf("page of the manual", 9));
    expect(await ingestor().handle(created("long.pdf"))).toMatchObject({
      action: "skipped",
      reason: expect.stringMatching(/9 pages/),
    });
    put("headings.md", Array.from({ length: 400 }, (_, i) => `# Heading ${i}\nline ${i}`).join("\n"));
    expect(await ingestor().handle(created("headings.md"))).toMatchObject({
      action: "skipped",
      reason: expect.stringMatching(/chunks/),
    });
    put("short.pdf", tinyPdf("page of the manual", 3));
    expect(await ingestor().handle(created("short.pdf"))).toMatchObject({ action: "replaced" });
  });

  it("skips a document whose processing outlasts its time bound, and keeps the previous version", async () => {
    put("slow.md", "The previous version of the slow document.");
    expect(await ingestor().handle(created("slow.md"))).toMatchObject({ action: "replaced" });
    put("slow.md", "A paragraph to embed slowly. ".repeat(600));
    const outcome = await slowIngestor().handle(created("slow.md"));
    expect(outcome).toMatchObject({ action: "skipped", reason: expect.stringMatching(/150 ms/) });
    expect(await row("slow.md")).toMatchObject({ status: "skipped", chunk_count: 1 });
  });

  it("has deliveries of the same content at once wait for the one processing it, not skip it as died", async () => {
    put("same.md", "Content delivered three times at once.");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = new HashingEmbeddings(1024);
    const embed = held.embedDocuments.bind(held);
    held.embedDocuments = async (texts) => {
      await gate;
      return embed(texts);
    };
    const delivery = () => ({ ...created("same.md"), etag: "etag-same" });
    const first = ingestor({}, held).handle(delivery());
    await vi.waitFor(async () => expect((await row("same.md"))?.status).toBe("processing"));
    const [second, third] = [delivery(), delivery()];
    await expect(ingestor().handle(second)).rejects.toThrow(/being processed/);
    await expect(ingestor().handle(third)).rejects.toThrow(/being processed/);
    release();
    expect(await first).toMatchObject({ action: "replaced" });
    // Their retries, once it is done, go through.
    for (const retry of [second, third]) expect(await ingestor().handle(retry)).toMatchObject({ action: "replaced" });
    expect(await row("same.md")).toMatchObject({ status: "ingested", chunk_count: 1 });
  });

  // Migrations are pushed before the functions are deployed: the old functions meanwhile call 008's form.
  it("never answers busy to the form functions deployed before attempt leases call", async () => {
    const version = { documentId: "docs/rollout.md", source: "rollout.md", sequencer: "2001", etag: "etag-rollout" };
    await store.beginDocument(version, new Date(Date.now() + 60_000));
    const { rows } = await db.query<{ state: string }>("select state from begin_document_attempt($1, $2, $3, $4)", [
      version.documentId,
      version.source,
      "2002",
      version.etag,
    ]);
    expect(rows[0]!.state).toBe("begin");
  });

  it("tries the same bytes again after a skip that was about the attempt (gone, out of time), not the content", async () => {
    const delivery = (key: string) => ({ ...created(key), etag: `etag-${key}` });
    expect(await ingestor().handle(delivery("back.md"))).toEqual({ action: "missing" });
    put("back.md", "Back again.");
    expect(await ingestor().handle(delivery("back.md"))).toMatchObject({ action: "replaced" });

    put("late.md", "A paragraph embedded slowly the first time. ".repeat(300));
    const timedOut = await slowIngestor().handle(delivery("late.md"));
    expect(timedOut).toMatchObject({ action: "skipped", reason: expect.stringMatching(/150 ms/) });
    expect(await ingestor().handle(delivery("late.md"))).toMatchObject({ action: "replaced" });
    // A skip for the content holds for those bytes under any later event.
    put("image.png.md", "\u0000binary");
    expect(await ingestor().handle(delivery("image.png.md"))).toMatchObject({ action: "skipped" });
    expect(await ingestor().handle(delivery("image.png.md"))).toMatchObject({ action: "skipped" });
  });

  it("does not retry into a crash: a version whose processing never finished twice is skipped", async () => {
    put("crasher.md", "Something that killed the process while it was processed.");
    const event = created("crasher.md");
    const version = { documentId: "docs/crasher.md", source: "crasher.md", sequencer: event.sequencer };
    // Two attempts that began and never recorded an end, as a process killed mid-document leaves them.
    await store.beginDocument(version, new Date(0));
    await store.beginDocument(version, new Date(0));
    expect(await ingestor().handle(event)).toMatchObject({
      action: "skipped",
      reason: expect.stringMatching(/did not finish/),
    });
    // A newer version of the same key starts afresh.
    expect(await ingestor().handle(created("crasher.md"))).toMatchObject({ action: "replaced" });
  });
});

describe("every document ends ingested, skipped or failed, recorded and logged", () => {
  it("records and logs text with NUL bytes, random bytes named .md and a deeply nested JSON", async () => {
    const warn = vi.spyOn(Logger.prototype, "warn");
    const info = vi.spyOn(Logger.prototype, "info");
    put("nul.txt", "before\u0000after, a text with a NUL inside");
    put(
      "noise.md",
      Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256),
    );
    const depth = 120_000; // arrays, two bytes a level, to stay under maxBytes
    put("deep.json", `${"[".repeat(depth)}"the answer at the bottom"${"]".repeat(depth)}`);
    const handler = createIngestHandler(async () => ({ ingestor: ingestor() }));
    const records = ["nul.txt", "noise.md", "deep.json"].map((key, i) => ({
      messageId: `m${i}`,
      body: s3Notification({ eventName: "ObjectCreated:Put", bucket: "docs", key, sequencer: `0${9000 + i}` }),
      attributes: { ApproximateReceiveCount: "1" },
    }));
    const response = await handler({ Records: records } as unknown as SQSEvent, lambdaContext("ingest", 60_000));
    expect(response.batchItemFailures).toEqual([]);
    expect(await row("nul.txt")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/NUL/) });
    expect(await row("noise.md")).toMatchObject({ status: "skipped", reason: expect.stringMatching(/UTF-8/) });
    expect(await row("deep.json")).toMatchObject({ status: "ingested", chunk_count: 1 });
    const logged = [...warn.mock.calls, ...info.mock.calls].map((c) => c[1] as { key?: string; action?: string });
    expect(logged.filter((f) => f?.key).map((f) => [f.key, f.action])).toEqual(
      expect.arrayContaining([
        ["nul.txt", "skipped"],
        ["noise.md", "skipped"],
        ["deep.json", "replaced"],
      ]),
    );
  });

  // A probe's finding: a key Postgres cannot store (a NUL) failed in the database on each receive
  // and was dead-lettered as a store failure, after two retries that could not help.
  it("skips, logs and acknowledges a document whose key the store cannot hold, without retrying it", async () => {
    const warn = vi.spyOn(Logger.prototype, "warn");
    const handler = createIngestHandler(async () => ({ ingestor: ingestor() }));
    const response = await handler(
      {
        Records: [
          {
            messageId: "nul-key",
            body: s3Notification({
              eventName: "ObjectCreated:Put",
              bucket: "docs",
              key: "a\u0000b.md",
              sequencer: "09200",
            }),
            attributes: { ApproximateReceiveCount: "1" },
          },
        ],
      } as unknown as SQSEvent,
      lambdaContext("ingest", 60_000),
    );
    expect(response.batchItemFailures).toEqual([]);
    const skipped = warn.mock.calls.find((c) => c[0] === "document skipped")?.[1] as { reason?: string } | undefined;
    expect(skipped?.reason).toBe("its key cannot be stored (a key must not contain NUL characters)");
  });

  it("records a document that fails with its error, logs it with its key, and reports only that record", async () => {
    const error = vi.spyOn(Logger.prototype, "error");
    put("unlucky.md", "Embedding this one fails.");
    put("lucky.md", "Embedding this one works.");
    const failing = new HashingEmbeddings(1024);
    const embedDocuments = failing.embedDocuments.bind(failing);
    failing.embedDocuments = async (texts) => {
      if (texts.some((t) => t.includes("fails"))) throw new Error("ThrottlingException: slow down");
      return embedDocuments(texts);
    };
    const handler = createIngestHandler(async () => ({ ingestor: ingestor({}, failing) }));
    const event = (key: string, i: number) => ({
      messageId: `f${i}`,
      body: s3Notification({ eventName: "ObjectCreated:Put", bucket: "docs", key, sequencer: `0${9100 + i}` }),
      attributes: { ApproximateReceiveCount: "1" },
    });
    const response = await handler(
      { Records: [event("unlucky.md", 0), event("lucky.md", 1)] } as unknown as SQSEvent,
      lambdaContext("ingest", 60_000),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "f0" }]);
    expect(await row("unlucky.md")).toMatchObject({ status: "failed", reason: expect.stringMatching(/Throttling/) });
    expect((await row("lucky.md"))?.status).toBe("ingested");
    expect(error.mock.calls.some((c) => (c[1] as { key?: string })?.key === "unlucky.md")).toBe(true);

    // Every record of a batch failing is still recorded, logged and reported, not thrown.
    const all = await handler(
      { Records: [event("unlucky.md", 2)] } as unknown as SQSEvent,
      lambdaContext("ingest", 60_000),
    );
    expect(all.batchItemFailures).toEqual([{ itemIdentifier: "f2" }]);
  });

  it("lists each document's status for an operator", async () => {
    const docs = await store.listDocuments("docs");
    const byKey = new Map(docs.map((d) => [d.source, d]));
    expect(byKey.get("nul.txt")).toMatchObject({
      status: "skipped",
      reason: expect.stringMatching(/NUL/),
      chunkCount: 0,
    });
    expect(byKey.get("lucky.md")).toMatchObject({ status: "ingested", chunkCount: 1, deleted: false });
    expect(byKey.get("unlucky.md")).toMatchObject({ status: "failed" });
  });

  it("the local queue logs a handler that throws instead of swallowing it", async () => {
    const errors: unknown[][] = [];
    const queue = new LocalQueue({
      name: "throwing",
      visibilityTimeoutMs: 10,
      pollIntervalMs: 5,
      maxReceiveCount: 1,
      deadLetterQueue: new LocalQueue({ name: "throwing-dlq" }),
      onError: (...args: unknown[]) => errors.push(args),
    });
    queue.send("{}");
    queue.start(async () => {
      throw new Error("handler exploded");
    });
    await queue.drained(5000);
    await queue.stop();
    expect(String(errors[0]?.[1] ?? errors[0])).toMatch(/handler exploded/);
  });
});
