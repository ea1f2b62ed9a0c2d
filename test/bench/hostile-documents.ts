import { performance } from "node:perf_hooks";
import { workerDocumentProcessor } from "../../infra/local/document-worker";
import { DEFAULT_LIMITS } from "../../shared/documents/extract-text";
import { processDocument, type DocumentProcessor } from "../../shared/documents/process";
import { loadConfig } from "../../shared/config";
import { docxBomb } from "../support/documents";
import { printTable } from "./table";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalPostgres } from "../../infra/local/postgres";
import { Ingestor } from "../../shared/ingest/ingestor";
import { FolderObjectSource } from "../../shared/ingest/object-source";
import { ingestSettings } from "../../shared/ingest/runtime";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";

/**
 * Hostile and large documents through extraction and chunking with the deployed bounds
 * (shared/config.ts defaults), in the handler's thread (as Lambda runs it) and on the local
 * stack's worker thread: the outcome, how long it took, and the longest the main event loop was
 * blocked meanwhile (what a request to the local API would have waited at most).
 */
/** Runs `work` with a 1 ms ticker on the main loop; the longest gap between ticks is the longest a request arriving meanwhile would have waited. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T | Error; ms: number; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  let value: T | Error;
  try {
    value = await work();
  } catch (err) {
    value = err as Error;
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 5)); // let the ticker see the end of a block
  clearInterval(ticker);
  return { value, ms, stall };
}

export async function run() {
  const config = loadConfig({});
  const limits = () => ({
    ...DEFAULT_LIMITS,
    maxTextChars: config.INGEST_MAX_TEXT_CHARS,
    maxUnzippedBytes: config.INGEST_MAX_UNZIPPED_BYTES,
    maxPdfPages: config.INGEST_MAX_PDF_PAGES,
    maxChunks: config.INGEST_MAX_CHUNKS,
    timeoutMs: config.INGEST_DOCUMENT_TIMEOUT_MS,
    deadline: Date.now() + config.INGEST_DOCUMENT_TIMEOUT_MS,
  });
  const text = (s: string) => new TextEncoder().encode(s);
  const sentence = "Refunds are processed within five working days of the request. ";
  const documents: Array<[string, string, Uint8Array]> = [
    ["handbook.md (1.2 MB, ~1,500 chunks)", "handbook.md", text(`# Handbook\n\n${sentence.repeat(19_000)}`)],
    ["faq.html (3 MB of HTML)", "faq.html", text(`<p>${sentence}</p>`.repeat(42_000))],
    ["dump.txt (9.5 MB of text)", "dump.txt", text(sentence.repeat(150_000))],
    ["bomb.docx (200 MB of XML)", "bomb.docx", await docxBomb(200_000_000)],
  ];
  const worker = workerDocumentProcessor();
  const rows = [];
  try {
    // Warm both paths (module loading, the worker's thread and JIT), then measure.
    for (const p of [processDocument, worker])
      await p({
        key: "warm.md",
        body: text("# Warm\nup"),
        limits: limits(),
        chunking: { chunkSize: 1000, chunkOverlap: 150 },
      });
    for (const [name, key, body] of documents) {
      for (const [where, processor] of [
        ["handler thread", processDocument],
        ["worker thread", worker],
      ] as Array<[string, DocumentProcessor]>) {
        const rss = process.memoryUsage().rss;
        const chunking = { chunkSize: config.INGEST_CHUNK_SIZE, chunkOverlap: config.INGEST_CHUNK_OVERLAP };
        const { value, ms, stall } = await measured(() => processor({ key, body, limits: limits(), chunking }));
        const outcome = value instanceof Error ? `skipped: ${value.message}` : `${value.length} chunks`;
        rows.push({
          document: name,
          "on disk": `${(body.length / 1024).toFixed(0)} KB`,
          where,
          outcome,
          "time (ms)": ms.toFixed(0),
          "longest event-loop stall (ms)": stall.toFixed(0),
          "RSS growth (MB)": ((process.memoryUsage().rss - rss) / 1048576).toFixed(0),
        });
      }
    }
  } finally {
    await worker.close();
  }
  printTable("Hostile and large documents: extraction + chunking with the default bounds", rows);

  // The whole ingest of the largest document the bounds admit, as the local stack runs it: the
  // worker extracts, the main thread embeds (hashing stand-in) and writes to PGlite.
  const dir = mkdtempSync(join(tmpdir(), "hostile-bench-"));
  const db = await startLocalPostgres();
  const local = workerDocumentProcessor();
  try {
    const [, key, body] = documents[0]!;
    writeFileSync(join(dir, key), body);
    const ingestor = new Ingestor({
      source: new FolderObjectSource(dir),
      store: new RpcAgentStore(sqlRpc(db)),
      embeddings: new HashingEmbeddings(config.EMBEDDING_DIM),
      settings: ingestSettings(config),
      processor: local,
    });
    const whole = [];
    for (const sequencer of ["01", "02"]) {
      const { value, ms, stall } = await measured(() =>
        ingestor.handle({ kind: "created", bucket: "b", key, sequencer }),
      );
      whole.push({
        run: sequencer === "01" ? "first" : "again (replaces)",
        outcome: JSON.stringify(value),
        "time (ms)": ms.toFixed(0),
        "longest event-loop stall (ms)": stall.toFixed(0),
      });
    }
    printTable(`Whole ingest of ${documents[0]![0]} on the local stack (worker + embeddings + PGlite)`, whole);
  } finally {
    await local.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
