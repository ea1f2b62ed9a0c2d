import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createIngestHandler } from "../../functions/ingest";
import { startLocalPostgres } from "../../infra/local/postgres";
import { LocalQueue } from "../../infra/local/queue";
import { s3Notification, sequencerAt } from "../../infra/local/s3-events";
import { loadConfig } from "../../shared/config";
import { ingestSettings } from "../../shared/ingest/runtime";
import { Ingestor } from "../../shared/ingest/ingestor";
import { FolderObjectSource } from "../../shared/ingest/object-source";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { prose } from "../support/conversation";
import { printTable } from "./table";

/**
 * Ingest throughput on a generated corpus: markdown documents of 2–8 KB with headings,
 * through the real handler and the local queue (batches of 10), into PGlite, with the
 * hashing embedder. The concurrency setting bounds embeddings calls in flight per document.
 */
const DOCUMENTS = 200;

function corpus(dir: string): number {
  let bytes = 0;
  for (let i = 0; i < DOCUMENTS; i++) {
    const sections = 2 + (i % 4);
    const body = Array.from(
      { length: sections },
      (_, s) => `## Section ${s + 1}\n\n${prose(i * 31 + s, 1200 + ((i * 97) % 800))}\n`,
    ).join("\n");
    const text = `# Document ${i}\n\n${body}`;
    writeFileSync(join(dir, `doc-${i}.md`), text);
    bytes += text.length;
  }
  return bytes;
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "ingest-bench-"));
  const db = await startLocalPostgres();
  try {
    const bytes = corpus(dir);
    const config = loadConfig({});
    const rows = [];
    // The first pass warms the JIT and PGlite and is not reported; then each setting in turn.
    for (const [pass, concurrency] of [4, 1, 2, 4, 8].entries()) {
      const bucket = `bench-pass${pass}`;
      const ingestor = new Ingestor({
        source: new FolderObjectSource(dir),
        store: new RpcAgentStore(sqlRpc(db)),
        embeddings: new HashingEmbeddings(config.EMBEDDING_DIM),
        settings: { ...ingestSettings(config), embedConcurrency: concurrency },
      });
      const queue = new LocalQueue({ name: "ingest", batchSize: 10, pollIntervalMs: 1 });
      for (let i = 0; i < DOCUMENTS; i++) {
        queue.send(
          s3Notification({
            eventName: "ObjectCreated:Put",
            bucket,
            key: `doc-${i}.md`,
            size: 1,
            sequencer: sequencerAt(Date.now()),
          }),
        );
      }
      const t0 = performance.now();
      queue.start(createIngestHandler(async () => ({ ingestor })));
      await queue.drained(600_000);
      await queue.stop();
      const seconds = (performance.now() - t0) / 1000;
      const { rows: counted } = await db.query<{ n: number }>(
        "select count(*)::int as n from knowledge_chunks where document_id like $1",
        [`${bucket}/%`],
      );
      const chunks = counted[0]!.n;
      if (pass === 0) continue;
      rows.push({
        INGEST_EMBED_CONCURRENCY: concurrency,
        documents: DOCUMENTS,
        chunks,
        seconds: seconds.toFixed(2),
        "documents / s": (DOCUMENTS / seconds).toFixed(1),
        "chunks / s": (chunks / seconds).toFixed(1),
      });
    }
    printTable(
      `ingest throughput: ${DOCUMENTS} markdown documents (${(bytes / 1024).toFixed(0)} KB), hashing embedder, PGlite`,
      rows,
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
