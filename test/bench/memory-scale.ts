import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { performance } from "node:perf_hooks";
import { applyMigrations } from "../../infra/local/postgres";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { vectorLiteral } from "../../shared/stores/agent-store";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { prose } from "../support/conversation";
import { median, printTable } from "./table";

/**
 * match_memories at scale on PGlite: HNSW against exact search over the same rows.
 *
 * 256 dimensions (Titan v2's smallest setting), not the migrations' 1024: PGlite is
 * single-threaded 32-bit WebAssembly, and building HNSW over 100k x 1024 vectors there takes
 * well over ten minutes (20k x 1024 took 104 s here). The migrations run as written
 * except for the vector width. BENCH_MEMORIES overrides the row count.
 */
const ROWS = Number(process.env.BENCH_MEMORIES ?? 100_000);
const DIM = 256;
const QUERIES = 50;
const K = 5;
const USER = "heavy-user";

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

export async function run() {
  const db = await PGlite.create(undefined, { extensions: { vector } });
  try {
    await applyMigrations(db, undefined, (sql) => sql.replaceAll("vector(1024)", `vector(${DIM})`));
    const embedder = new HashingEmbeddings(DIM);
    // Bulk load as a real backfill would: without the index, then build it once.
    await db.exec("drop index agent_memories_embedding");
    let t0 = performance.now();
    for (let i = 0; i < ROWS; i += 1000) {
      const contents = Array.from({ length: Math.min(1000, ROWS - i) }, (_, j) => `${prose(i + j + 1, 70)} #${i + j}`);
      await db.query(
        `insert into agent_memories (user_id, content, embedding)
         select $1, c, e::vector from unnest($2::text[], $3::text[]) as t(c, e)`,
        [USER, contents, contents.map((c) => vectorLiteral(embedder.embed(c)))],
      );
    }
    const loadMs = performance.now() - t0;
    await db.exec("set maintenance_work_mem = '1GB'");
    t0 = performance.now();
    await db.exec("create index agent_memories_embedding on agent_memories using hnsw (embedding vector_cosine_ops)");
    const buildMs = performance.now() - t0;
    await db.exec("analyze agent_memories");

    const store = new RpcAgentStore(sqlRpc(db));
    const queries = Array.from({ length: QUERIES }, (_, i) => embedder.embed(prose(10_000_000 + i, 50)));
    const plan = async () =>
      (
        await db.query<{ "QUERY PLAN": string }>(
          `explain select id from agent_memories m where m.superseded_by is null and (m.user_id = $2 or m.user_id is null)
           and m.project_id is null order by m.embedding <=> $1::vector limit ${K}`,
          [vectorLiteral(queries[0]!), USER],
        )
      ).rows
        .map((r) => r["QUERY PLAN"])
        .find((l) => /Scan/.test(l))
        ?.trim()
        .replace(/\s+\(cost.*$/, "") ?? "?";

    const measure = async () => {
      const ms: number[] = [];
      const ids: string[][] = [];
      for (const embedding of queries) {
        const start = performance.now();
        const rows = await store.matchMemories({ embedding, limit: K, userId: USER });
        ms.push(performance.now() - start);
        ids.push(rows.map((r) => r.id));
      }
      return { ms, ids };
    };
    const hnswPlan = await plan();
    const hnsw = await measure();
    await db.exec("set enable_indexscan = off; set enable_bitmapscan = off");
    const exactPlan = await plan();
    const exact = await measure();
    await db.exec("reset enable_indexscan; reset enable_bitmapscan");
    const recall =
      hnsw.ids.reduce((s, found, i) => s + found.filter((id) => exact.ids[i]!.includes(id)).length / K, 0) / QUERIES;

    printTable(
      `match_memories over ${ROWS.toLocaleString("en")} memories x ${DIM} dims on PGlite (load ${(loadMs / 1000).toFixed(0)} s, HNSW build ${(buildMs / 1000).toFixed(0)} s)`,
      [
        {
          search: "HNSW (iterative scan, ef_search 100)",
          plan: hnswPlan,
          "p50 ms": median(hnsw.ms).toFixed(2),
          "p95 ms": quantile(hnsw.ms, 0.95).toFixed(2),
          "recall@5 vs exact": recall.toFixed(3),
        },
        {
          search: "exact (index scans off)",
          plan: exactPlan,
          "p50 ms": median(exact.ms).toFixed(2),
          "p95 ms": quantile(exact.ms, 0.95).toFixed(2),
          "recall@5 vs exact": "1.000",
        },
      ],
    );
  } finally {
    await db.close();
  }
}
