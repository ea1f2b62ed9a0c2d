import { Metrics } from "@aws-lambda-powertools/metrics";
import { randomUUID } from "node:crypto";
import { createExtractionHandler } from "../../functions/memory-extraction";
import { buildExtractionRuntime } from "../../graph/memory/runtime";
import { queueWithDeadLetters } from "../../infra/local/queue";
import { loadConfig } from "../../shared/config";
import { createIdempotencyTable } from "../../shared/idempotency";
import type { AgentStore } from "../../shared/stores/agent-store";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

/** The extraction consumer behind a local queue, as the stack deploys it (3 receives, then the DLQ). */
async function consumer(store: AgentStore = harness.store) {
  const config = loadConfig({ IDEMPOTENCY_TABLE: `idem-${randomUUID()}` });
  await createIdempotencyTable(harness.dynamo.client, config.IDEMPOTENCY_TABLE);
  const runtime = await buildExtractionRuntime({ config, dynamo: harness.dynamo.client, store });
  const { queue, deadLetters: dlq } = queueWithDeadLetters("extraction", {
    visibilityTimeoutMs: 50,
    pollIntervalMs: 5,
    maxReceiveCount: 3,
  });
  queue.start(createExtractionHandler(async () => runtime));
  return { queue, dlq };
}

const message = (user: string, text: string, turnId = randomUUID()) =>
  JSON.stringify({
    user_id: user,
    project_id: null,
    session_id: randomUUID(),
    turn_id: turnId,
    user_message: text,
    assistant_reply: "ok",
  });
const memoriesOf = (user: string) => harness.store.listMemories(user, { limit: 50 });

describe("memory extraction consumer", () => {
  it("adds one memory when the same turn is delivered twice", async () => {
    const { queue, dlq } = await consumer();
    const body = message("u-twice", "I prefer window seats on long flights");
    queue.send(body);
    queue.send(body);
    await queue.drained();
    await queue.stop();
    expect((await memoriesOf("u-twice")).map((m) => m.content)).toEqual(["I prefer window seats on long flights"]);
    expect(dlq.depth).toBe(0);
  });

  it("counts a turn's memories once, however often it is delivered", async () => {
    const added = vi.spyOn(Metrics.prototype, "addMetric");
    try {
      const { queue } = await consumer();
      const body = message("u-metrics", "I prefer aisle seats on short flights");
      queue.send(body);
      await queue.drained();
      queue.send(body);
      await queue.drained();
      await queue.stop();
      const count = (name: string) =>
        added.mock.calls.filter(([metric]) => metric === name).reduce((n, [, , value]) => n + Number(value), 0);
      expect(count("MemoriesAdded")).toBe(1);
      expect(count("FactsExtracted")).toBe(1);
    } finally {
      added.mockRestore();
    }
  });

  it("counts a fact the user deleted since its turn began as forgotten, and stores nothing", async () => {
    const added = vi.spyOn(Metrics.prototype, "addMetric");
    try {
      const { queue } = await consumer();
      const turnAt = new Date(Date.now() - 10_000).toISOString();
      const said = (text: string) => ({ ...JSON.parse(message("u-forgot", text)), turn_at: turnAt });
      queue.send(JSON.stringify(said("My locker code is 2210")));
      await queue.drained();
      const [memory] = await memoriesOf("u-forgot");
      await harness.store.deleteMemory("u-forgot", memory!.id);
      // Another message of a turn from before the deletion (one still in flight).
      queue.send(JSON.stringify(said("My locker code is 2210")));
      await queue.drained();
      await queue.stop();
      const count = (name: string) =>
        added.mock.calls.filter(([metric]) => metric === name).reduce((n, [, , value]) => n + Number(value), 0);
      expect(count("MemoriesForgotten")).toBe(1);
      expect(await memoriesOf("u-forgot")).toEqual([]);
    } finally {
      added.mockRestore();
    }
  });

  it("dead-letters a poison message after 3 receives while the rest of its batch succeeds", async () => {
    const { queue, dlq } = await consumer();
    queue.send(message("u-batch", "I live in Porto"));
    queue.send("{not json");
    queue.send(JSON.stringify({ user_id: "u-batch", turn_id: "no-text" }));
    queue.send(message("u-batch", "I work at Acme"));
    await queue.drained();
    await queue.stop();
    expect((await memoriesOf("u-batch")).map((m) => m.content).sort()).toEqual(["I live in Porto", "I work at Acme"]);
    expect(
      dlq
        .peek()
        .map((m) => m.body)
        .sort(),
    ).toEqual(['{"user_id":"u-batch","turn_id":"no-text"}', "{not json"]);
  });

  it("retries through a store outage instead of losing the turn", async () => {
    let failures = 2;
    const flaky = new Proxy(harness.store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "matchMemories") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (failures-- > 0) throw new Error("Supabase unavailable");
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const { queue, dlq } = await consumer(flaky);
    queue.send(message("u-outage", "I am allergic to peanuts"));
    await queue.drained();
    await queue.stop();
    expect((await memoriesOf("u-outage")).map((m) => m.content)).toEqual(["I am allergic to peanuts"]);
    expect(dlq.depth).toBe(0);
  });
});
