import { echoGraph, humanTurn } from "../../support/conversation";
import { checkpointHarness } from "../../support/dynamo";
import { meter } from "../../support/dynamo-meter";

// The saver's cost contract, asserted as behaviour; the figures themselves are in `npm run bench`.
let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

describe("cost per turn", () => {
  it("writes each put in one request and reads the latest checkpoint in at most 2, all consistent", async () => {
    const { saver } = await harness.newSaver();
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 20; turn++) await graph.invoke(humanTurn(turn), { configurable: { thread_id: "cost" } });

    const m = meter(harness.dynamo.client);
    const latest = await saver.getTuple({ configurable: { thread_id: "cost" } });
    expect(m.requests).toBeLessThanOrEqual(2);
    expect(m.consistentReads.every(Boolean)).toBe(true);
    expect((latest!.checkpoint.channel_values.messages as unknown[]).length).toBe(40);

    m.reset();
    const { checkpoint, metadata, config } = latest!;
    await saver.put(config, { ...checkpoint, id: "1f0c0000-0000-6000-8000-000000000000" }, metadata!, {});
    expect(m.byCommand).toEqual({ BatchWriteItemCommand: 1 });
    m.detach();
  });

  it("writes only the appended messages of a turn, however long the thread", async () => {
    const { saver } = await harness.newSaver();
    const graph = echoGraph(saver);
    const m = meter(harness.dynamo.client);
    const perTurn: number[] = [];
    for (let turn = 1; turn <= 50; turn++) {
      m.reset();
      await graph.invoke(humanTurn(turn), { configurable: { thread_id: "growth" } });
      perTurn.push(m.bytesWritten);
    }
    m.detach();
    expect(perTurn[49]!).toBeLessThanOrEqual(1.5 * perTurn[4]!);
  });

  it("does not let history in the input pile up: 3 turns hold exactly 3 human messages", async () => {
    const { saver } = await harness.newSaver();
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 3; turn++) await graph.invoke(humanTurn(turn), { configurable: { thread_id: "three" } });
    const state = await graph.getState({ configurable: { thread_id: "three" } });
    const types = (state.values.messages as { getType(): string }[]).map((msg) => msg.getType());
    expect(types).toEqual(["human", "ai", "human", "ai", "human", "ai"]);
  });
});
