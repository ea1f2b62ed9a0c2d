import { CreateTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { emptyCheckpoint, MemorySaver, uuid6, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver as RwaiSaver } from "@rwai/langgraphjs-checkpoint-dynamodb";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { echoGraph, humanTurn } from "../support/conversation";
import { meter, type Meter } from "../support/dynamo-meter";
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
}

async function contenders(dynamo: LocalDynamo, pg?: Awaited<ReturnType<typeof postgresSaver>>): Promise<Contender[]> {
  await createCheckpointTable(dynamo.client, "bench-ours");
  const ours = new DynamoDBSaver({ client: dynamo.client, tableName: "bench-ours" });
  const rwai = await rwaiSaver(dynamo);
  return [
    { name: "this DynamoDBSaver", saver: ours, meter: meter(dynamo.client) },
    // Its own client, built inside the saver; the meter attaches to that one.
    {
      name: "@rwai/langgraphjs-checkpoint-dynamodb",
      saver: rwai as unknown as BaseCheckpointSaver,
      meter: meter((rwai as unknown as { client: DynamoDBClient }).client),
    },
    { name: "MemorySaver (no I/O)", saver: new MemorySaver() },
    ...(pg
      ? [
          {
            name: "@langchain/langgraph-checkpoint-postgres (PGlite socket; wire bytes)",
            saver: pg.saver,
            meter: wireMeter(pg.io),
          },
        ]
      : []),
  ];
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

async function conversation(c: Contender) {
  const graph = echoGraph(c.saver);
  const config = { configurable: { thread_id: `bench-${c.name}` } };
  const ms: number[] = [];
  const requests: number[] = [];
  const written: number[] = [];
  const units: number[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    c.meter?.reset();
    const t0 = performance.now();
    await graph.invoke(humanTurn(turn), config);
    ms.push(performance.now() - t0);
    requests.push(c.meter?.requests ?? 0);
    written.push(c.meter?.bytesWritten ?? 0);
    units.push(c.meter?.writeUnits ?? 0);
  }
  const reads: { ms: number; requests: number; bytes: number }[] = [];
  for (let i = 0; i < 10; i++) {
    c.meter?.reset();
    const t0 = performance.now();
    const tuple = await c.saver.getTuple(config);
    reads.push({ ms: performance.now() - t0, requests: c.meter?.requests ?? 0, bytes: c.meter?.bytesRead ?? 0 });
    if ((tuple!.checkpoint.channel_values.messages as unknown[]).length !== 2 * TURNS)
      throw new Error(`${c.name}: wrong state`);
  }
  return { ms, requests, written, units, reads };
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
  try {
    const all = await contenders(dynamo, pg);
    const rows = [];
    const series = [];
    for (const c of all) {
      const r = await conversation(c);
      const at = (turn: number) => r.written[turn - 1]!;
      const io = c.meter !== undefined;
      rows.push({
        saver: c.name,
        "ms/turn (median)": median(r.ms).toFixed(2),
        "requests/turn": io ? median(r.requests) : 0,
        ...Object.fromEntries(REPORT_TURNS.map((t) => [`bytes written t${t}`, io ? at(t) : "-"])),
        "t50 / t5": io ? (at(50) / at(5)).toFixed(2) : "-",
        "WRU t50": io ? r.units[49]! : "-",
        "getTuple requests": io ? median(r.reads.map((x) => x.requests)) : 0,
        "bytes read / getTuple": io ? median(r.reads.map((x) => x.bytes)) : "-",
        "getTuple ms": median(r.reads.map((x) => x.ms)).toFixed(2),
      });
      if (io)
        series.push({ saver: c.name, ...Object.fromEntries([1, 10, 20, 30, 40, 50].map((t) => [`t${t}`, at(t)])) });
    }
    printTable(`${TURNS}-turn conversation, MessagesAnnotation graph, ~500-byte messages`, rows);
    printTable("bytes written per turn as the conversation grows", series);
    const large = [];
    for (const c of all) large.push(await largeState(c));
    printTable("one 2 MB hard-to-compress channel value (DynamoDB item limit: 400 KB)", large);
  } finally {
    await pg.close();
    await dynamo.close();
  }
}
