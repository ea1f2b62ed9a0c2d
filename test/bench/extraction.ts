import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createExtractionHandler } from "../../functions/memory-extraction";
import { buildChatRuntime } from "../../graph/chat/runtime";
import { createCheckpointTable } from "../../graph/checkpoint";
import { buildExtractionRuntime } from "../../graph/memory/runtime";
import { startLocalDynamo } from "../../infra/local/dynamo";
import { startLocalPostgres } from "../../infra/local/postgres";
import { LocalQueue } from "../../infra/local/queue";
import type { Backends } from "../../shared/backends";
import { loadConfig } from "../../shared/config";
import { createIdempotencyTable } from "../../shared/idempotency";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { RpcConversationStore } from "../../shared/stores/rpc-conversations";
import { median, printTable } from "./table";

/**
 * What extraction costs the chat reply, and how fast the consumer drains its queue, on the
 * local stack's backends (dynalite, PGlite, offline model, hashing embedder). Replies with
 * and without extraction alternate in one run so drift hits both alike. Locally the consumer
 * shares the process with chat; in AWS it is another function, so the cost there is the
 * SendMessage call alone.
 */
const TURNS = 60;
const THROUGHPUT_MESSAGES = 200;

const FACTS = [
  "I prefer window seats",
  "I live in Porto",
  "I work at Acme",
  "my favourite colour is teal",
  "I am learning the cello",
];
const message = (i: number) => `${FACTS[i % FACTS.length]} ${i}. How are you today?`;

export async function run() {
  const [dynamo, postgres] = await Promise.all([startLocalDynamo(), startLocalPostgres()]);
  const config = loadConfig({
    CHECKPOINT_TABLE: "bench-chat",
    IDEMPOTENCY_TABLE: "bench-idempotency",
    LOG_LEVEL: "SILENT",
  });
  await createCheckpointTable(dynamo.client, config.CHECKPOINT_TABLE);
  await createIdempotencyTable(dynamo.client, config.IDEMPOTENCY_TABLE);
  const backends: Backends = {
    config,
    dynamo: dynamo.client,
    conversations: new RpcConversationStore(sqlRpc(postgres)),
    store: new RpcAgentStore(sqlRpc(postgres)),
  };
  const queue = new LocalQueue({ name: "memory-extraction", pollIntervalMs: 5 });
  const extractionRuntime = await buildExtractionRuntime(backends);
  queue.start(createExtractionHandler(async () => extractionRuntime));
  try {
    const off = await buildChatRuntime(backends);
    const on = await buildChatRuntime({ ...backends, extractionQueue: queue });
    const ms = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < TURNS; i++) {
      const order: ["on" | "off", typeof on][] = [
        ["off", off],
        ["on", on],
      ];
      if (i % 2) order.reverse();
      for (const [name, runtime] of order) {
        const t0 = performance.now();
        await runtime.chat.reply({ userId: `bench-${name}-${i % 5}`, message: message(i) });
        ms[name].push(performance.now() - t0);
      }
    }
    await queue.drained(120_000);
    const offMedian = median(ms.off.slice(5));
    const onMedian = median(ms.on.slice(5));
    printTable(
      `chat reply latency, extraction on vs off (${TURNS} turns each, alternating, first 5 dropped as warm-up)`,
      [
        {
          extraction: "off",
          "median ms": offMedian.toFixed(2),
          "p90 ms": quantile(ms.off, 0.9).toFixed(2),
          "on / off": "",
        },
        {
          extraction: "on",
          "median ms": onMedian.toFixed(2),
          "p90 ms": quantile(ms.on, 0.9).toFixed(2),
          "on / off": (onMedian / offMedian).toFixed(3),
        },
      ],
    );

    for (let i = 0; i < THROUGHPUT_MESSAGES; i++) {
      queue.send(
        JSON.stringify({
          user_id: `tp-${i % 20}`,
          project_id: null,
          session_id: randomUUID(),
          turn_id: randomUUID(),
          user_message: message(i),
          assistant_reply: "Noted.",
        }),
      );
    }
    const t0 = performance.now();
    await queue.drained(300_000);
    const seconds = (performance.now() - t0) / 1000;
    printTable("extraction throughput on the local stack (batches of 10, one consumer)", [
      {
        messages: THROUGHPUT_MESSAGES,
        seconds: seconds.toFixed(2),
        "messages / s": (THROUGHPUT_MESSAGES / seconds).toFixed(1),
      },
    ]);
  } finally {
    await queue.stop();
    await postgres.close();
    await dynamo.close();
  }
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
