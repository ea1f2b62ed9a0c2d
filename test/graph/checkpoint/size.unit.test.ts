import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { randomBytes } from "node:crypto";
import { checkpointHarness } from "../../support/dynamo";
import { itemSize } from "../../support/dynamo-meter";
import { scanAll } from "../../support/scan";
import { marshall } from "@aws-sdk/util-dynamodb";

// DynamoDB items are capped at 400 KB; states past that must still round-trip.
let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

/** Random bytes as base64: about 6 bits of entropy per character, so Brotli gains little. */
const noise = (bytes: number) =>
  randomBytes(Math.ceil((bytes * 3) / 4))
    .toString("base64")
    .slice(0, bytes);

function checkpointWith(values: Record<string, unknown>) {
  const versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return { ...emptyCheckpoint(), id: uuid6(0), channel_values: values, channel_versions: versions };
}

describe("states over DynamoDB's item limit", () => {
  it("round-trips a 2 MB hard-to-compress single value", async () => {
    const { saver, tableName } = await harness.newSaver();
    const blob = noise(2 * 1024 * 1024);
    const checkpoint = checkpointWith({ document: blob });
    const config = await saver.put(
      { configurable: { thread_id: "big", checkpoint_ns: "" } },
      checkpoint,
      { source: "input", step: -1, parents: {} },
      checkpoint.channel_versions,
    );
    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values.document).toBe(blob);
    const items = await scanAll(harness.dynamo.client, tableName);
    expect(items.length).toBeGreaterThan(5);
    for (const item of items) expect(itemSize(marshall(item) as any)).toBeLessThan(400 * 1024);
  });

  it("round-trips a thread whose messages hold 2 MB of hard-to-compress text, one of them 600 KB", async () => {
    const { saver } = await harness.newSaver();
    const messages = [
      new HumanMessage({ id: "h0", content: noise(600 * 1024) }),
      ...Array.from({ length: 14 }, (_, i) =>
        i % 2 === 0
          ? new AIMessage({ id: `a${i}`, content: noise(100 * 1024) })
          : new HumanMessage({ id: `h${i}`, content: noise(100 * 1024) }),
      ),
    ];
    const checkpoint = checkpointWith({ messages });
    const config = await saver.put(
      { configurable: { thread_id: "big-messages", checkpoint_ns: "" } },
      checkpoint,
      { source: "loop", step: 1, parents: {} },
      checkpoint.channel_versions,
    );
    const tuple = await saver.getTuple(config);
    const restored = tuple?.checkpoint.channel_values.messages as HumanMessage[];
    expect(restored.map((m) => m.content)).toEqual(messages.map((m) => m.content));
    expect(restored.map((m) => m.getType())).toEqual(messages.map((m) => m.getType()));
  });

  it("records the codec on every payload item and compresses what compresses", async () => {
    const { saver, tableName } = await harness.newSaver();
    const text = "the same sentence again and again. ".repeat(2000);
    const checkpoint = checkpointWith({ notes: text, tiny: 1 });
    await saver.put(
      { configurable: { thread_id: "codec", checkpoint_ns: "" } },
      checkpoint,
      { source: "input", step: -1, parents: {} },
      checkpoint.channel_versions,
    );
    const items = await scanAll(harness.dynamo.client, tableName);
    const payloadItems = items.filter((i) => i.d !== undefined || i.bx !== undefined);
    expect(payloadItems.length).toBeGreaterThan(0);
    // Part items carry only bytes; the item that references them records the codec.
    for (const item of items.filter((i) => !i.sk.startsWith("x#"))) expect(["raw", "br"]).toContain(item.cd);
    const part = items.find((i) => i.sk.startsWith("x#"))!;
    expect(part.d.byteLength).toBeLessThan(text.length / 10);
  });
});
