import type { PGlite } from "@electric-sql/pglite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { recallMemory } from "../../graph/tools/memory-recall";
import { asLangChainTool } from "../../graph/tools/langchain-tool";
import { startLocalPostgres } from "../../infra/local/postgres";
import { loadConfig } from "../../shared/config";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { storedMemory, vectorLiteral } from "../../shared/stores/agent-store";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { median, printTable } from "./table";

/**
 * Retrieval quality and speed on PGlite with the hashing embedder (the offline stand-in:
 * lexical similarity only, so these figures are a floor for what Titan would give).
 */
const FIXTURES = join(import.meta.dirname, "../fixtures");
const load = <T>(name: string): T => JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as T;

interface MemoryFixture {
  memories: { id: string; user: string; content: string }[];
  queries: { user: string; query: string; relevant: string[] }[];
}
interface KnowledgeFixture {
  chunks: { id: string; source: string; content: string }[];
  queries: { query: string; relevant: string[] }[];
}

const embedder = new HashingEmbeddings(1024);
const K = 5;

/** recall@k: the share of a query's relevant items found in the top k, averaged over queries. */
const recallAt = (found: string[][], relevant: string[][]) =>
  found.reduce(
    (sum, f, i) => sum + relevant[i]!.filter((r) => f.slice(0, K).includes(r)).length / relevant[i]!.length,
    0,
  ) / found.length;

async function memoryRecall(db: PGlite) {
  const fixture = load<MemoryFixture>("memories.json");
  const store = new RpcAgentStore(sqlRpc(db));
  const idOf = new Map<string, string>();
  for (const m of fixture.memories) {
    const { id } = await store
      .insertMemory({
        userId: m.user,
        projectId: null,
        content: m.content,
        embedding: embedder.embed(m.content),
      })
      .then(storedMemory);
    idOf.set(id, m.id);
  }
  const minScore = loadConfig({}).MEMORY_MIN_SCORE;
  const recall = asLangChainTool(recallMemory, { store, embeddings: embedder, minMemoryScore: minScore });
  const raw: string[][] = [];
  const viaTool: string[][] = [];
  const scored: { id: string; score: number; relevant: boolean }[][] = [];
  for (const q of fixture.queries) {
    const matches = await store.matchMemories({ embedding: embedder.embed(q.query), limit: K, userId: q.user });
    raw.push(matches.map((m) => idOf.get(m.id)!));
    scored.push(
      matches.map((m) => ({
        id: idOf.get(m.id)!,
        score: m.similarity,
        relevant: q.relevant.includes(idOf.get(m.id)!),
      })),
    );
    const out = JSON.parse(String(await recall.invoke({ query: q.query }, { configurable: { user_id: q.user } })));
    viaTool.push(out.results.map((r: { memoryId: string }) => idOf.get(r.memoryId)!));
  }
  const relevant = fixture.queries.map((q) => q.relevant);
  printTable(
    `recall_memory, hashing embedder: ${fixture.memories.length} memories, ${fixture.queries.length} labelled queries`,
    [
      {
        path: "match_memories top 5",
        "recall@5": recallAt(raw, relevant).toFixed(3),
        "results / query": (raw.flat().length / raw.length).toFixed(2),
      },
      {
        path: `recall_memory tool (MEMORY_MIN_SCORE ${minScore})`,
        "recall@5": recallAt(viaTool, relevant).toFixed(3),
        "results / query": (viaTool.flat().length / viaTool.length).toFixed(2),
      },
    ],
  );
  // The threshold sweep MEMORY_MIN_SCORE was chosen from: keep most right answers, drop most noise.
  printTable(
    "MEMORY_MIN_SCORE sweep over the same top-5 matches",
    [0.1, 0.15, 0.2, 0.25, 0.3].map((t) => {
      const kept = scored.map((list) => list.filter((m) => m.score >= t));
      return {
        threshold: t,
        "recall@5": recallAt(
          kept.map((l) => l.map((m) => m.id)),
          relevant,
        ).toFixed(3),
        "irrelevant results / query": (kept.flat().filter((m) => !m.relevant).length / kept.length).toFixed(2),
        "queries with no result": kept.filter((l) => l.length === 0).length,
      };
    }),
  );
}

async function knowledgeRecall(db: PGlite) {
  const fixture = load<KnowledgeFixture>("knowledge.json");
  for (const [i, c] of fixture.chunks.entries()) {
    await db.query(
      "insert into knowledge_chunks (document_id, source, chunk_index, content, embedding) values ($1, $2, $3, $4, $5::vector)",
      [c.id, c.source, i, c.content, vectorLiteral(embedder.embed(c.content))],
    );
  }
  const store = new RpcAgentStore(sqlRpc(db));
  const rows = [];
  for (const [name, fullTextWeight] of [
    ["hybrid (full text + vector, RRF)", 1],
    ["vector only", 0],
  ] as const) {
    const found: string[][] = [];
    const ms: number[] = [];
    let firstHit = 0;
    for (const q of fixture.queries) {
      const t0 = performance.now();
      const matches = await store.matchKnowledge({
        text: q.query,
        embedding: embedder.embed(q.query),
        limit: K,
        fullTextWeight,
      });
      ms.push(performance.now() - t0);
      const ids = matches.map((m) => m.documentId);
      found.push(ids);
      if (q.relevant.includes(ids[0]!)) firstHit++;
    }
    rows.push({
      match_knowledge: name,
      "recall@5": recallAt(
        found,
        fixture.queries.map((q) => q.relevant),
      ).toFixed(3),
      "top-1 hit rate": (firstHit / fixture.queries.length).toFixed(3),
      "p50 ms": median(ms).toFixed(2),
    });
  }
  printTable(`match_knowledge: ${fixture.chunks.length} chunks, ${fixture.queries.length} labelled questions`, rows);
}

/** Extraction's duplicate test: how well a similarity threshold separates rewordings from other facts. */
function duplicateThreshold() {
  const { pairs } = load<{ pairs: { a: string; b: string; duplicate: boolean }[] }>("fact-pairs.json");
  const scored = pairs.map((p) => ({
    ...p,
    score: embedder.embed(p.a).reduce((s, v, i) => s + v * embedder.embed(p.b)[i]!, 0),
  }));
  const current = loadConfig({}).MEMORY_DUPLICATE_THRESHOLD;
  printTable(
    `MEMORY_DUPLICATE_THRESHOLD sweep: ${pairs.filter((p) => p.duplicate).length} reworded pairs, ${pairs.filter((p) => !p.duplicate).length} distinct pairs (current ${current})`,
    [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9].map((t) => {
      const flagged = scored.filter((p) => p.score >= t);
      return {
        threshold: t,
        "rewordings caught": `${flagged.filter((p) => p.duplicate).length} / ${scored.filter((p) => p.duplicate).length}`,
        "distinct facts wrongly dropped":
          flagged
            .filter((p) => !p.duplicate)
            .map((p) => `${p.a} ~ ${p.b}`)
            .join("; ") || "none",
      };
    }),
  );
}

export async function run() {
  duplicateThreshold();
  const db = await startLocalPostgres();
  try {
    await memoryRecall(db);
    await knowledgeRecall(db);
  } finally {
    await db.close();
  }
}
