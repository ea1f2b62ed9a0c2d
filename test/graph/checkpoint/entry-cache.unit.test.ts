import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { EntryCache } from "../../../graph/checkpoint/entry-cache";
import { echoGraph, humanTurn } from "../../support/conversation";
import { checkpointHarness } from "../../support/dynamo";
import { meter } from "../../support/dynamo-meter";

// The saver keeps the log entries it wrote or read, so a warm container reads a thread's latest
// checkpoint in one Query instead of reading its history back.

let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

/** A serializer that counts what it encodes and decodes. */
function countingSerde() {
  const inner = new JsonPlusSerializer();
  const counts = { dumps: 0, loads: 0 };
  return {
    counts,
    serde: {
      dumpsTyped: (value: unknown) => {
        counts.dumps += 1;
        return inner.dumpsTyped(value);
      },
      loadsTyped: (type: string, bytes: Uint8Array | string) => {
        counts.loads += 1;
        return inner.loadsTyped(type, bytes);
      },
    },
  };
}

async function threadOf(turns: number, serde?: ReturnType<typeof countingSerde>["serde"]) {
  const { saver, tableName } = await harness.newSaver(serde ? { serde } : {});
  const thread = { configurable: { thread_id: `t-${turns}` } };
  const graph = echoGraph(saver);
  for (let turn = 1; turn <= turns; turn++) await graph.invoke(humanTurn(turn), thread);
  return { saver, tableName, thread };
}

describe("the saver's log-entry cache", () => {
  it("reads the latest checkpoint in one Query where it wrote the history, two where it did not", async () => {
    const { saver, tableName, thread } = await threadOf(30);
    const m = meter(harness.dynamo.client);
    try {
      const warm = await saver.getTuple(thread);
      expect(m.byCommand).toEqual({ QueryCommand: 1 });
      m.reset();
      const cold = await new DynamoDBSaver({ client: harness.dynamo.client, tableName }).getTuple(thread);
      expect(m.byCommand.QueryCommand).toBe(2);
      expect(cold!.checkpoint.channel_values).toEqual(warm!.checkpoint.channel_values);
    } finally {
      m.detach();
    }
  });

  it("hands out fresh messages: mutating one changes nothing a later read returns", async () => {
    const { saver, thread } = await threadOf(30);
    const first = (await saver.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    const before = first.map((message) => message.content);
    first[0]!.content = "tampered";
    first.pop();
    const again = (await saver.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(again.map((message) => message.content)).toEqual(before);
  });

  it("decodes a message once: a warm read copies what it decoded or wrote instead of parsing it again", async () => {
    const counting = countingSerde();
    const { saver, tableName, thread } = await threadOf(20, counting.serde);
    counting.counts.loads = 0;
    const warm = (await saver.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(warm).toHaveLength(40);
    // The checkpoint's own skeleton and metadata are decoded; none of the 40 messages is.
    expect(counting.counts.loads).toBeLessThan(5);

    const cold = new DynamoDBSaver({ client: harness.dynamo.client, tableName, serde: counting.serde });
    counting.counts.loads = 0;
    await cold.getTuple(thread);
    expect(counting.counts.loads).toBeGreaterThanOrEqual(40);
    counting.counts.loads = 0;
    const again = (await cold.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(counting.counts.loads).toBeLessThan(5);
    expect(again.map((m) => [m.constructor.name, m.id, m.content])).toEqual(
      warm.map((m) => [m.constructor.name, m.id, m.content]),
    );
    expect(again[1]).toBeInstanceOf(AIMessage);
    expect(again[0]).toBeInstanceOf(HumanMessage);
  });

  it("serializes only the messages a put adds after its parent's head", async () => {
    const counting = countingSerde();
    const { thread, saver } = await threadOf(30, counting.serde);
    const graph = (await import("../../support/conversation")).echoGraph(saver);
    counting.counts.dumps = 0;
    await graph.invoke(humanTurn(31), thread);
    // Per put: the new messages, the checkpoint skeleton and its metadata; never the 60 before.
    expect(counting.counts.dumps).toBeLessThan(20);
    const messages = (await saver.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(messages).toHaveLength(62);
  });

  it("stores a state whose earlier messages changed in full, not as an append", async () => {
    const { saver, tableName, thread } = await threadOf(10);
    const graph = (await import("../../support/conversation")).echoGraph(saver);
    const state = await graph.getState(thread);
    const first = (state.values.messages as BaseMessage[])[0]!;
    // Same id, new content: the reducer replaces the message rather than appending.
    await graph.updateState(thread, { messages: [new HumanMessage({ id: first.id, content: "rewritten" })] });
    const cold = new DynamoDBSaver({ client: harness.dynamo.client, tableName });
    const messages = (await cold.getTuple(thread))!.checkpoint.channel_values.messages as BaseMessage[];
    expect(messages[0]!.content).toBe("rewritten");
    expect(messages).toHaveLength(20);
  });
});

describe("EntryCache", () => {
  const entry = (i: number, bytes = 100) => ({ sk: `l##messages#${i}#h${i}`, cd: "raw", d: new Uint8Array(bytes) });

  it("stays within its byte budget, dropping the least recently used first", () => {
    const cache = new EntryCache(10_000);
    for (let i = 0; i < 100; i++) cache.keep("t", entry(i), { value: { i }, rawBytes: 1000 });
    expect(cache.size).toBeLessThan(5);
    expect(cache.entry("t", entry(99).sk)).toBeDefined();
    expect(cache.entry("t", entry(0).sk)).toBeUndefined();
  });

  it("keeps a decoded value when the entry is kept again without one, and forgets a dropped thread", () => {
    const cache = new EntryCache(1_000_000);
    cache.keep("t", entry(1), { value: { text: "decoded" }, rawBytes: 10 });
    cache.keep("t", entry(1));
    expect(cache.value("t", entry(1).sk)).toEqual({ value: { text: "decoded" } });
    cache.keep("u", entry(2));
    cache.dropThread("t");
    expect(cache.entry("t", entry(1).sk)).toBeUndefined();
    expect(cache.entry("u", entry(2).sk)).toBeDefined();
  });
});

describe("EntryCache memory", () => {
  it("keeps each payload in a buffer of its own, not the pooled or chunked block it was read into", () => {
    const cache = new EntryCache(1_000_000);
    const block = new Uint8Array(16 * 1024);
    const view = block.subarray(100, 400);
    cache.keep("t", { sk: "l##messages#1#h", cd: "br", d: view });
    const kept = cache.entry("t", "l##messages#1#h")!.d!;
    expect(kept).toEqual(view);
    expect(kept.buffer.byteLength).toBe(300);
  });
});
