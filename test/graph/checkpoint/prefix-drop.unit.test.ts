import { AIMessage, RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { humanTurn, prose } from "../../support/conversation";
import { checkpointHarness } from "../../support/dynamo";
import { meter } from "../../support/dynamo-meter";

// A conversation trimmed to a working window (what the chat graph does once history is
// summarised): the saver must drop the prefix without rewriting what remains, and read
// only the live window.
const WINDOW = 10;

/** One AI reply per turn, then RemoveMessage for everything older than the last WINDOW messages. */
function windowedGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [new AIMessage(prose(state.messages.length * 7919 + 1))] }))
    .addNode("trim", async (state) => ({
      messages: state.messages
        .slice(0, Math.max(0, state.messages.length - WINDOW))
        .map((m: BaseMessage) => new RemoveMessage({ id: m.id! })),
    }))
    .addEdge(START, "agent")
    .addEdge("agent", "trim")
    .addEdge("trim", END)
    .compile({ checkpointer });
}

let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

const logKeys = (keys: string[]) => keys.filter((k) => k.startsWith("l#"));
const texts = (messages: unknown) => (messages as BaseMessage[]).map((m) => String(m.content));

describe("dropping a prefix of the messages channel", () => {
  it("writes only the new messages and reads only the live window, however long the thread", async () => {
    const { saver } = await harness.newSaver();
    const graph = windowedGraph(saver);
    const config = { configurable: { thread_id: "drop" } };
    const m = meter(harness.dynamo.client);
    const written: number[] = [];
    const read: number[] = [];
    for (let turn = 1; turn <= 40; turn++) {
      m.reset();
      await graph.invoke(humanTurn(turn), config);
      written.push(m.bytesWritten);
      // Each turn stores its two messages once; the trim step stores no log entry at all.
      // (The first turns fit inline in the checkpoint item: no log yet.)
      if (turn >= 4) expect(logKeys(m.writtenKeys)).toHaveLength(2);
      m.reset();
      const tuple = await saver.getTuple(config);
      read.push(m.bytesRead);
      expect((tuple!.checkpoint.channel_values.messages as unknown[]).length).toBe(Math.min(2 * turn, WINDOW));
    }
    m.detach();
    expect(written[39]!).toBeLessThanOrEqual(1.5 * written[4]!);
    // Past the window the read is the window's, not the thread's.
    expect(read[39]!).toBeLessThanOrEqual(1.1 * read[9]!);
  });

  it("keeps the window intact for a saver that has not seen the parent (another container)", async () => {
    const { saver, tableName } = await harness.newSaver();
    const config = { configurable: { thread_id: "cold" } };
    for (let turn = 1; turn <= 8; turn++) await windowedGraph(saver).invoke(humanTurn(turn), config);
    const expected = texts((await saver.getTuple(config))!.checkpoint.channel_values.messages);
    // A fresh saver (empty cache) writes the next turns: the drop is then written afresh, once.
    const { DynamoDBSaver } = await import("../../../graph/checkpoint");
    const cold = new DynamoDBSaver({ client: harness.dynamo.client, tableName });
    await windowedGraph(cold).invoke(humanTurn(9), config);
    await windowedGraph(cold).invoke(humanTurn(10), config);
    const after = texts((await saver.getTuple(config))!.checkpoint.channel_values.messages);
    expect(after).toHaveLength(WINDOW);
    expect(after.slice(0, WINDOW - 4)).toEqual(expected.slice(4));
    expect(after[WINDOW - 2]).toBe(humanTurn(10).messages[0]!.content);
  });

  it("still reads every older checkpoint of the thread in full", async () => {
    const { saver } = await harness.newSaver();
    const graph = windowedGraph(saver);
    const config = { configurable: { thread_id: "history" } };
    for (let turn = 1; turn <= 12; turn++) await graph.invoke(humanTurn(turn), config);
    const states = [];
    for await (const s of graph.getStateHistory(config)) states.push(s);
    // Input, agent and trim checkpoints per turn, plus the first input's.
    expect(states.length).toBeGreaterThanOrEqual(36);
    for (const s of states) {
      const msgs = texts(s.values.messages ?? []);
      expect(msgs.length).toBeLessThanOrEqual(WINDOW + 2);
    }
    // The agent step of turn 12 saw 10 kept messages + the new human + its reply.
    const beforeTrim = states.find((s) => s.next[0] === "trim")!;
    expect(texts(beforeTrim.values.messages)).toHaveLength(WINDOW + 2);
  });
});
