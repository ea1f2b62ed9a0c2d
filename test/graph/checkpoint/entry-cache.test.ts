import type { BaseMessage } from "@langchain/core/messages";
import { DynamoDBSaver } from "../../../graph/checkpoint";
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

async function threadOf(turns: number) {
  const { saver, tableName } = await harness.newSaver();
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
});
