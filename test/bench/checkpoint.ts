import {
  CreateTableCommand,
  QueryCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { emptyCheckpoint, MemorySaver, uuid6, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver as RwaiSaver } from "@rwai/langgraphjs-checkpoint-dynamodb";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { echoGraph, humanTurn } from "../support/conversation";
import { itemSize, meter, type Meter } from "../support/dynamo-meter";
import { postgresSaver, type Io } from "./postgres-saver";
import { median, printTable } from "./table";

/**
 * The checkpoint savers side by side on the same dynalite, driving a real
 * MessagesAnnotation graph: 50 turns of 1 human + 1 AI message of ~500 bytes of prose.
 * Bytes are DynamoDB item bytes as billed (names + values); WRU are write request
 * units (one per started KB per item written).
 */
const TURNS = 50;
const REPORT_TURNS = [5, 25, 50];

interface Contender {
  name: string;
  saver: BaseCheckpointSaver;
  meter?: Meter;
  /** bytes the thread's state takes in storage */
  stored?(thread: string): Promise<number>;
  /** a saver over the same storage with nothing cached, as in a new process */
  fresh?(): BaseCheckpointSaver;
}

async function contenders(
  dynamo: LocalDynamo,
  pg: Awaited<ReturnType<typeof postgresSaver>>,
  sqlite: Contender | undefined,
): Promise<Contender[]> {
  await createCheckpointTable(dynamo.client, "bench-ours");
  const ours = new DynamoDBSaver({ client: dynamo.client, tableName: "bench-ours" });
  const rwai = await rwaiSaver(dynamo);
  return [
    {
      name: "this DynamoDBSaver",
      saver: ours,
      meter: meter(dynamo.client),
      stored: (thread) => dynamoBytes(dynamo.client, { TableName: "bench-ours", pk: "pk", thread }),
      fresh: () => new DynamoDBSaver({ client: dynamo.client, tableName: "bench-ours" }),
    },
    // Its own client, built inside the saver; the meter attaches to that one.
    {
      name: "@rwai/langgraphjs-checkpoint-dynamodb",
      saver: rwai as unknown as BaseCheckpointSaver,
      meter: meter((rwai as unknown as { client: DynamoDBClient }).client),
      stored: async (thread) =>
        (await dynamoBytes(dynamo.client, { TableName: "bench-rwai-checkpoints", pk: "thread_id", thread })) +
        (await dynamoBytes(dynamo.client, {
          TableName: "bench-rwai-writes",
          pk: "thread_id_checkpoint_id_checkpoint_ns",
          prefix: thread,
        })),
    },
    {
      name: `@langchain/langgraph-checkpoint-postgres (${pg.where}; wire bytes)`,
      saver: pg.saver,
      meter: wireMeter(pg.io),
      stored: (thread) => pg.io.bytes!(thread),
    },
    ...(sqlite ? [sqlite] : []),
    { name: "MemorySaver (no I/O)", saver: new MemorySaver() },
  ];
}

/** Billed item bytes of a thread's items: by key, or (rwai's writes table) by key prefix with a Scan. */
async function dynamoBytes(
  client: DynamoDBClient,
  where: { TableName: string; pk: string; thread?: string; prefix?: string },
): Promise<number> {
  let bytes = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out =
      where.thread !== undefined
        ? await client.send(
            new QueryCommand({
              TableName: where.TableName,
              KeyConditionExpression: "#k = :v",
              ExpressionAttributeNames: { "#k": where.pk },
              ExpressionAttributeValues: { ":v": { S: where.thread } },
              ExclusiveStartKey: start,
            }),
          )
        : await client.send(
            new ScanCommand({
              TableName: where.TableName,
              FilterExpression: "begins_with(#k, :v)",
              ExpressionAttributeNames: { "#k": where.pk },
              ExpressionAttributeValues: { ":v": { S: where.prefix! } },
              ExclusiveStartKey: start,
            }),
          );
    for (const item of out.Items ?? []) bytes += itemSize(item as never);
    start = out.LastEvaluatedKey;
  } while (start !== undefined);
  return bytes;
}

/**
 * LangGraph's official SQLite saver on better-sqlite3 (a file in a temp folder, WAL as the saver
 * sets it). An optional dependency: better-sqlite3 compiles from source at install, and where
 * that fails the bench says so instead of stopping. Requests are statements run; bytes written
 * are the bound parameters, bytes read the rows returned.
 */
async function sqliteContender(): Promise<{ contender?: Contender; missing?: string; close(): void }> {
  try {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const Database = (await import("better-sqlite3")).default;
    const dir = mkdtempSync(join(tmpdir(), "bench-sqlite-"));
    const db = new Database(join(dir, "checkpoints.db"));
    const counts = { requests: 0, written: 0, read: 0 };
    const size = (v: unknown): number =>
      v == null ? 0 : typeof v === "string" ? Buffer.byteLength(v) : v instanceof Uint8Array ? v.byteLength : 8;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const stmt = prepare(sql);
      const run = stmt.run.bind(stmt);
      const get = stmt.get.bind(stmt);
      const all = stmt.all.bind(stmt);
      stmt.run = ((...args: unknown[]) => {
        counts.requests += 1;
        counts.written += args.reduce<number>((n, a) => n + size(a), 0);
        return run(...args);
      }) as typeof stmt.run;
      const rowBytes = (row: unknown) =>
        row && typeof row === "object" ? Object.values(row).reduce<number>((n, v) => n + size(v), 0) : 0;
      stmt.get = ((...args: unknown[]) => {
        counts.requests += 1;
        const row = get(...args);
        counts.read += rowBytes(row);
        return row;
      }) as typeof stmt.get;
      stmt.all = ((...args: unknown[]) => {
        counts.requests += 1;
        const rows = all(...args);
        for (const row of rows) counts.read += rowBytes(row);
        return rows;
      }) as typeof stmt.all;
      return stmt;
    }) as typeof db.prepare;
    const saver = new SqliteSaver(db);
    const m = {
      get requests() {
        return counts.requests;
      },
      get bytesWritten() {
        return counts.written;
      },
      get bytesRead() {
        return counts.read;
      },
      writeUnits: 0,
      byCommand: {},
      writtenKeys: [],
      consistentReads: [],
      reset: () => Object.assign(counts, { requests: 0, written: 0, read: 0 }),
      detach: () => undefined,
      snapshot: () => ({ requests: m.requests, bytesWritten: m.bytesWritten, writeUnits: 0, bytesRead: m.bytesRead }),
    };
    return {
      contender: {
        name: "@langchain/langgraph-checkpoint-sqlite (better-sqlite3, file)",
        saver: saver as unknown as BaseCheckpointSaver,
        meter: m,
        stored: async (thread) => {
          const q = (sql: string) => (prepare(sql).get(thread) as { n: number | null }).n ?? 0;
          return (
            q(
              "select sum(length(thread_id) + length(checkpoint_ns) + length(checkpoint_id) + ifnull(length(parent_checkpoint_id), 0) + length(type) + length(checkpoint) + length(metadata)) as n from checkpoints where thread_id = ?",
            ) +
            q(
              "select sum(length(thread_id) + length(checkpoint_ns) + length(checkpoint_id) + length(task_id) + 8 + length(channel) + length(type) + length(value)) as n from writes where thread_id = ?",
            )
          );
        },
      },
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    return { missing: (err as Error).message.split("\n")[0], close: () => undefined };
  }
}

/** The two tables the rwai saver documents in its README. */
/** The @rwai saver, its tables created, on the bench's dynalite. */
export async function rwaiSaver(dynamo: LocalDynamo): Promise<RwaiSaver> {
  await createRwaiTables(dynamo.client);
  return new RwaiSaver({
    checkpointsTableName: "bench-rwai-checkpoints",
    writesTableName: "bench-rwai-writes",
    clientConfig: {
      endpoint: dynamo.endpoint,
      region: "local",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
    },
  });
}

async function createRwaiTables(client: DynamoDBClient) {
  const table = (name: string, hash: string, range: string) =>
    client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: hash, AttributeType: "S" },
          { AttributeName: range, AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: hash, KeyType: "HASH" },
          { AttributeName: range, KeyType: "RANGE" },
        ],
      }),
    );
  await table("bench-rwai-checkpoints", "thread_id", "checkpoint_id");
  await table("bench-rwai-writes", "thread_id_checkpoint_id_checkpoint_ns", "task_id_idx");
}

interface Series {
  ms: number[];
  requests: number[];
  written: number[];
  units: number[];
  reads: { ms: number; requests: number; bytes: number }[];
  freshReads: number[];
  stored?: number;
}

/** Rotates the contenders' order by `k`, so none always runs first (or right after another's GC). */
const rotated = <T>(list: T[], k: number) => list.map((_, i) => list[(i + k) % list.length]!);

/**
 * All contenders' conversations at once, turn by turn: turn t runs on every saver before turn
 * t+1 runs on any, so a noisy neighbour on the machine slows them all alike.
 */
async function conversations(all: Contender[]): Promise<Map<Contender, Series>> {
  const runs = all.map((c) => ({
    c,
    graph: echoGraph(c.saver),
    config: { configurable: { thread_id: `bench-${c.name}` } },
    series: { ms: [], requests: [], written: [], units: [], reads: [], freshReads: [] } as Series,
  }));
  for (let turn = 1; turn <= TURNS; turn++) {
    for (const { c, graph, config, series } of rotated(runs, turn)) {
      c.meter?.reset();
      const t0 = performance.now();
      await graph.invoke(humanTurn(turn), config);
      series.ms.push(performance.now() - t0);
      series.requests.push(c.meter?.requests ?? 0);
      series.written.push(c.meter?.bytesWritten ?? 0);
      series.units.push(c.meter?.writeUnits ?? 0);
    }
  }
  for (let i = 0; i < 10; i++) {
    for (const { c, config, series } of rotated(runs, i)) {
      c.meter?.reset();
      const t0 = performance.now();
      const tuple = await c.saver.getTuple(config);
      series.reads.push({
        ms: performance.now() - t0,
        requests: c.meter?.requests ?? 0,
        bytes: c.meter?.bytesRead ?? 0,
      });
      if ((tuple!.checkpoint.channel_values.messages as unknown[]).length !== 2 * TURNS)
        throw new Error(`${c.name}: wrong state`);
      const fresh = c.fresh?.() ?? c.saver;
      const t1 = performance.now();
      await fresh.getTuple(config);
      series.freshReads.push(performance.now() - t1);
    }
  }
  for (const { c, config, series } of runs) series.stored = await c.stored?.(config.configurable.thread_id);
  return new Map(runs.map((r) => [r.c, r.series]));
}

/** A 2 MB hard-to-compress value: what each saver does with a state past the 400 KB item limit. */
async function largeState(c: Contender) {
  const blob = randomBytes(1.5 * 1024 * 1024).toString("base64");
  const checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(0),
    channel_values: { document: blob },
    channel_versions: { document: 1 },
  };
  c.meter?.reset();
  const t0 = performance.now();
  try {
    const config = await c.saver.put(
      { configurable: { thread_id: `large-${c.name}`, checkpoint_ns: "" } },
      checkpoint,
      { source: "input", step: -1, parents: {} },
      { document: 1 },
    );
    const putMs = performance.now() - t0;
    const put = c.meter?.snapshot();
    c.meter?.reset();
    const t1 = performance.now();
    const tuple = await c.saver.getTuple(config);
    const getMs = performance.now() - t1;
    if (tuple?.checkpoint.channel_values.document !== blob) throw new Error("did not round-trip");
    return {
      saver: c.name,
      result: "round-trips",
      "put ms": putMs.toFixed(1),
      "put requests": put?.requests ?? 0,
      "put WRU": put?.writeUnits ?? 0,
      "getTuple ms": getMs.toFixed(1),
      "getTuple requests": c.meter?.requests ?? 0,
    };
  } catch (err) {
    return {
      saver: c.name,
      result: `fails: ${(err as Error).message.slice(0, 60)}`,
      "put ms": "",
      "put requests": "",
      "put WRU": "",
      "getTuple ms": "",
      "getTuple requests": "",
    };
  }
}

/** The Postgres saver's traffic read as a meter: statements sent, bytes each way on the wire. */
function wireMeter(io: Io): Meter {
  const m = {
    get requests() {
      return io.read().requests;
    },
    get bytesWritten() {
      return io.written();
    },
    get bytesRead() {
      return io.read().bytes;
    },
    writeUnits: 0,
    byCommand: {},
    writtenKeys: [],
    consistentReads: [],
    reset: () => io.reset(),
    detach: () => undefined,
    snapshot: () => ({ requests: m.requests, bytesWritten: m.bytesWritten, writeUnits: 0, bytesRead: m.bytesRead }),
  };
  return m;
}

export async function run() {
  const dynamo = await startLocalDynamo();
  const pg = await postgresSaver();
  const sqlite = await sqliteContender();
  try {
    const all = await contenders(dynamo, pg, sqlite.contender);
    const results = await conversations(all);
    const rows = [];
    const series = [];
    for (const c of all) {
      const r = results.get(c)!;
      const at = (turn: number) => r.written[turn - 1]!;
      const io = c.meter !== undefined;
      rows.push({
        saver: c.name,
        "ms/turn (median)": median(r.ms).toFixed(2),
        "requests/turn": io ? median(r.requests) : 0,
        ...Object.fromEntries(REPORT_TURNS.map((t) => [`bytes written t${t}`, io ? at(t) : "-"])),
        "t50 / t5": io ? (at(50) / at(5)).toFixed(2) : "-",
        "WRU t50": io && c.meter!.writeUnits !== undefined && r.units[49] ? r.units[49] : "-",
        "bytes stored": r.stored ?? "-",
        "getTuple requests": io ? median(r.reads.map((x) => x.requests)) : 0,
        "bytes read / getTuple": io ? median(r.reads.map((x) => x.bytes)) : "-",
        "getTuple ms": median(r.reads.map((x) => x.ms)).toFixed(2),
        "getTuple ms, new process": c.fresh ? median(r.freshReads).toFixed(2) : "same",
      });
      if (io)
        series.push({ saver: c.name, ...Object.fromEntries([1, 10, 20, 30, 40, 50].map((t) => [`t${t}`, at(t)])) });
    }
    printTable(
      `${TURNS}-turn conversation, MessagesAnnotation graph, ~500-byte messages, turns interleaved across savers`,
      rows,
    );
    if (sqlite.missing) console.log(`\n(SQLite saver not measured: ${sqlite.missing})`);
    printTable("bytes written per turn as the conversation grows", series);
    const [ours, rwai, postgres] = all.map((c) => results.get(c)!);
    const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(2);
    const readMs = (x: Series) => x.reads.map((r) => r.ms);
    printTable("goals (issue 17), this saver against its peers in the same run", [
      { measure: "ms/turn, this / rwai", goal: "<= 0.80", measured: ratio(ours!.ms, rwai!.ms) },
      { measure: `ms/turn, this / Postgres (${pg.where})`, goal: "<= 1.00", measured: ratio(ours!.ms, postgres!.ms) },
      {
        measure: "getTuple ms at turn 50, this / rwai",
        goal: "<= 1.00",
        measured: ratio(readMs(ours!), readMs(rwai!)),
      },
      {
        measure: "getTuple ms at turn 50 from a new process, this / rwai",
        goal: "(no goal)",
        measured: ratio(ours!.freshReads, readMs(rwai!)),
      },
    ]);
    const large = [];
    for (const c of all) large.push(await largeState(c));
    printTable("one 2 MB hard-to-compress channel value (DynamoDB item limit: 400 KB)", large);
  } finally {
    sqlite.close();
    await pg.close();
    await dynamo.close();
  }
}
