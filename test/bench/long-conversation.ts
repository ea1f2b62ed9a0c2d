import { QueryCommand, ScanCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { HumanMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { defaultContextBudget } from "../../graph/chat/context";
import { buildChatGraph } from "../../graph/chat/graph";
import { chatTools } from "../../graph/tools/registry";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { startLocalPostgres } from "../../infra/local/postgres";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { OFFLINE_CONTEXT_WINDOW, OfflineChatModel } from "../../shared/models/offline-chat-model";
import { vectorLiteral } from "../../shared/stores/agent-store";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { prose } from "../support/conversation";
import { meter, type Meter } from "../support/dynamo-meter";
import { rwaiSaver } from "./checkpoint";
import { postgresSaver as postgres, type Io } from "./postgres-saver";
import { printTable } from "./table";

/**
 * A 200-turn chat session through the real chat graph (offline stand-in model with its
 * 8,192-token window, the agent's tools on PGlite, the hashing embedder), every fourth turn
 * a knowledge-base question (turns 1, 5, 9, …; the others are ~200-byte statements).
 * Knowledge passages are padded to ~1,300 bytes, so a search returns 1–2k tokens as a
 * production knowledge base does. Reported at turns 10, 50, 100, 200 (statements) and at
 * the knowledge turns just before them (5, 9, 49, 97, 197), so like is compared with like;
 * the run without a budget is reported at every turn until it fails.
 *
 * - model input tokens: the turn's agent calls, as the model reported them (usage_metadata);
 *   summary tokens: the compaction call's input, when one ran that turn.
 * - getTuple: one read of the thread's latest checkpoint after the turn (what the next
 *   turn starts with). DynamoDB: item bytes as billed; Postgres: bytes on the wire.
 * - written: checkpoint bytes written during the turn, measured the same way.
 * - items: what the saver stores for the thread (DynamoDB items; Postgres rows).
 */
const TURNS = 200;
const REPORT = [5, 9, 10, 49, 50, 97, 100, 197, 200];
const KNOWLEDGE_PAD = 1300;

interface Contender {
  name: string;
  saver: BaseCheckpointSaver;
  budget: boolean;
  io: Io;
}

/** Sums each turn's model usage by graph node (agent vs. compact). */
class UsageMeter extends BaseCallbackHandler {
  name = "usage-meter";
  override awaitHandlers = true;
  private readonly nodes = new Map<string, string>();
  tokens: Record<string, number> = {};

  override handleChatModelStart(
    _llm: unknown,
    _messages: unknown,
    runId: string,
    _parent?: string,
    _extra?: unknown,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ) {
    this.nodes.set(runId, String(metadata?.langgraph_node ?? "?"));
  }

  override handleLLMEnd(output: LLMResult, runId: string) {
    const usage = (output.generations[0]?.[0] as { message?: { usage_metadata?: { input_tokens: number } } })?.message
      ?.usage_metadata;
    const node = this.nodes.get(runId) ?? "?";
    this.tokens[node] = (this.tokens[node] ?? 0) + (usage?.input_tokens ?? 0);
  }
}

function dynamoIo(m: Meter, count: (thread: string) => Promise<number>): Io {
  return {
    reset: () => m.reset(),
    read: () => ({ bytes: m.bytesRead, requests: m.requests }),
    written: () => m.bytesWritten,
    items: count,
  };
}

async function countItems(client: DynamoDBClient, input: ConstructorParameters<typeof QueryCommand>[0]) {
  let n = 0;
  let start: Record<string, never> | undefined;
  do {
    const out = await client.send(new QueryCommand({ ...input, Select: "COUNT", ExclusiveStartKey: start }));
    n += out.Count ?? 0;
    start = out.LastEvaluatedKey as typeof start;
  } while (start);
  return n;
}

async function ours(dynamo: LocalDynamo, table: string): Promise<{ saver: DynamoDBSaver; io: Io }> {
  await createCheckpointTable(dynamo.client, table);
  const saver = new DynamoDBSaver({ client: dynamo.client, tableName: table });
  const m = meter(dynamo.client);
  return {
    saver,
    io: dynamoIo(m, (thread) =>
      countItems(dynamo.client, {
        TableName: table,
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": { S: thread } },
      }),
    ),
  };
}

async function rwai(dynamo: LocalDynamo): Promise<{ saver: BaseCheckpointSaver; io: Io }> {
  const saver = await rwaiSaver(dynamo);
  const m = meter((saver as unknown as { client: DynamoDBClient }).client);
  return {
    saver: saver as unknown as BaseCheckpointSaver,
    io: dynamoIo(m, async (thread) => {
      const checkpoints = await countItems(dynamo.client, {
        TableName: "bench-rwai-checkpoints",
        KeyConditionExpression: "thread_id = :t",
        ExpressionAttributeValues: { ":t": { S: thread } },
      });
      const writes = await dynamo.client.send(
        new ScanCommand({
          TableName: "bench-rwai-writes",
          Select: "COUNT",
          FilterExpression: "begins_with(thread_id_checkpoint_id_checkpoint_ns, :t)",
          ExpressionAttributeValues: { ":t": { S: thread } },
        }),
      );
      return checkpoints + (writes.Count ?? 0);
    }),
  };
}

interface KnowledgeFixture {
  chunks: { id: string; source: string; content: string }[];
  queries: { query: string }[];
}

async function knowledgeStore() {
  const db = await startLocalPostgres();
  const embedder = new HashingEmbeddings(1024);
  const fixture = JSON.parse(
    readFileSync(join(import.meta.dirname, "../fixtures/knowledge.json"), "utf8"),
  ) as KnowledgeFixture;
  for (const [i, c] of fixture.chunks.entries()) {
    const content = `${c.content} ${prose(i + 1, KNOWLEDGE_PAD)}`;
    await db.query(
      "insert into knowledge_chunks (document_id, source, chunk_index, content, embedding) values ($1, $2, $3, $4, $5::vector)",
      [c.id, c.source, i, content, vectorLiteral(embedder.embed(content))],
    );
  }
  return { db, store: new RpcAgentStore(sqlRpc(db)), embedder, questions: fixture.queries.map((q) => q.query) };
}

const message = (turn: number, questions: string[]) =>
  turn % 4 === 1 ? questions[((turn - 1) / 4) % questions.length]! : `Note for later: ${prose(turn, 200)}.`;

interface Row {
  turn: number;
  kind: string;
  input: number;
  summary: number;
  readBytes: number;
  readRequests: number;
  written: number;
  items: number;
  ms: number;
}

async function session(
  c: Contender,
  deps: Awaited<ReturnType<typeof knowledgeStore>>,
): Promise<{ rows: Row[]; failed?: { turn: number; error: string } }> {
  const model = new OfflineChatModel();
  const tools = chatTools({ store: deps.store, embeddings: deps.embedder, minMemoryScore: 0.15 });
  const graph = buildChatGraph({
    model,
    tools,
    checkpointer: c.saver,
    ...(c.budget ? { context: { budget: defaultContextBudget(undefined), summarizer: model } } : {}),
  });
  const thread = `long-${c.name}`;
  const config = { configurable: { thread_id: thread, user_id: "bench" } };
  const rows: Row[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const usage = new UsageMeter();
    c.io.reset();
    const t0 = performance.now();
    try {
      await graph.invoke(
        { messages: [new HumanMessage(message(turn, deps.questions))] },
        { ...config, callbacks: [usage] },
      );
    } catch (err) {
      return { rows, failed: { turn, error: (err as Error).message } };
    }
    const ms = performance.now() - t0;
    const written = c.io.written();
    c.io.reset();
    await c.saver.getTuple(config);
    const read = c.io.read();
    const reported = !c.budget || REPORT.includes(turn);
    rows.push({
      turn,
      kind: turn % 4 === 1 ? "knowledge" : "statement",
      input: usage.tokens.agent ?? 0,
      summary: usage.tokens.compact ?? 0,
      readBytes: read.bytes,
      readRequests: read.requests,
      written,
      items: reported ? await c.io.items(thread) : -1,
      ms,
    });
  }
  return { rows };
}

const fmt = (rows: Row[]) =>
  rows.map((r) => ({
    turn: r.turn,
    kind: r.kind,
    "model input tokens": r.input,
    "summary call tokens": r.summary || "",
    "getTuple bytes": r.readBytes,
    "getTuple requests": r.readRequests,
    "bytes written": r.written,
    "items stored": r.items,
    "turn ms": r.ms.toFixed(0),
  }));

export async function run() {
  const dynamo = await startLocalDynamo();
  const deps = await knowledgeStore();
  const closers: (() => Promise<void>)[] = [];
  try {
    const designSaver = await ours(dynamo, "bench-long-design");
    const contenders: Contender[] = [
      { name: "this design (budget + DynamoDBSaver)", ...designSaver, budget: true },
      { name: "no budget (DynamoDBSaver)", ...(await ours(dynamo, "bench-long-unbounded")), budget: false },
      { name: "budget + @rwai/langgraphjs-checkpoint-dynamodb", ...(await rwai(dynamo)), budget: true },
    ];
    try {
      const pg = await postgres();
      closers.push(pg.close);
      contenders.push({
        name: "budget + @langchain/langgraph-checkpoint-postgres (PGlite socket)",
        ...pg,
        budget: true,
      });
    } catch (err) {
      console.log(`(Postgres saver skipped: ${(err as Error).message})`);
    }
    const summary = [];
    for (const c of contenders) {
      const { rows, failed } = await session(c, deps);
      printTable(
        `${c.name}: ${failed ? `fails at turn ${failed.turn}: ${failed.error.slice(0, 90)}` : `${TURNS} turns completed`}`,
        fmt(rows.filter((r) => r.items >= 0)),
      );
      // Point samples depend on where each turn falls in the compaction cycle; the most a
      // turn costs over ten turns is the figure that must not grow.
      const most = (f: (r: Row) => number, from: number, to: number) =>
        Math.max(...rows.filter((r) => r.turn >= from && r.turn <= to).map(f));
      const growth = (f: (r: Row) => number) =>
        rows.length >= 200 ? (most(f, 191, 200) / most(f, 41, 50)).toFixed(2) : "-";
      const at = (t: number) => rows.find((r) => r.turn === t);
      const ratio = (f: (r: Row) => number, a: number, b: number) =>
        at(a) && at(b) && f(at(b)!) > 0 ? (f(at(a)!) / f(at(b)!)).toFixed(2) : "-";
      summary.push({
        run: c.name,
        result: failed ? `fails at turn ${failed.turn}` : "completes",
        "input t200/t50": ratio((r) => r.input, 200, 50),
        "max input t191–200 / t41–50": growth((r) => r.input),
        "input t197/t49 (knowledge)": ratio((r) => r.input, 197, 49),
        "getTuple bytes t200/t50": ratio((r) => r.readBytes, 200, 50),
        "max getTuple bytes t191–200 / t41–50": growth((r) => r.readBytes),
        "max written t191–200 / t41–50": growth((r) => r.written),
        "written t200/t50": ratio((r) => r.written, 200, 50),
        "written t197/t5 (knowledge)": ratio((r) => r.written, 197, 5),
        "items t200/t50": ratio((r) => r.items, 200, 50),
        "max getTuple bytes t191–200": rows.length >= 200 ? most((r) => r.readBytes, 191, 200) : "-",
      });
    }
    printTable(
      `ratios (model window ${OFFLINE_CONTEXT_WINDOW} tokens, CONTEXT_TOKEN_BUDGET ${defaultContextBudget(undefined)})`,
      summary,
    );
  } finally {
    for (const close of closers) await close();
    await deps.db.close();
    await dynamo.close();
  }
}
