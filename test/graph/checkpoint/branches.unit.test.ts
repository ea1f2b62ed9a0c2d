import { DeleteItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { echoGraph, humanTurn } from "../../support/conversation";
import { checkpointHarness } from "../../support/dynamo";
import { scanAll } from "../../support/scan";

let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

const contents = (values: Record<string, unknown>) => (values.messages as { content: unknown }[]).map((m) => m.content);

describe("branches and incomplete writes", () => {
  it("keeps both branches intact when a run resumes from an older checkpoint", async () => {
    const { saver } = await harness.newSaver();
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "fork" } };
    for (let turn = 1; turn <= 5; turn++) await graph.invoke(humanTurn(turn), thread);
    const history = [];
    for await (const snapshot of graph.getStateHistory(thread)) history.push(snapshot);
    const afterTurn3 = history.find((s) => (s.values.messages as unknown[]).length === 6 && s.next.length === 0)!;
    const original = contents((await graph.getState(thread)).values);

    await graph.invoke(humanTurn(99), afterTurn3.config); // a new turn 4 on a branch from turn 3
    const branched = contents((await graph.getState(thread)).values);
    expect(branched).toHaveLength(8);
    expect(branched.slice(0, 6)).toEqual(original.slice(0, 6));
    expect(branched[6]).not.toEqual(original[6]);

    // The first branch is still readable in full.
    const oldHead = history[0]!;
    const reread = await saver.getTuple(oldHead.config);
    expect(contents(reread!.checkpoint.channel_values)).toEqual(original);
  });

  it("skips a checkpoint whose pieces never all landed and serves its parent", async () => {
    const warnings: string[] = [];
    const { saver, tableName } = await harness.newSaver({ warn: (m) => warnings.push(m) });
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "torn" } };
    for (let turn = 1; turn <= 4; turn++) await graph.invoke(humanTurn(turn), thread);
    const latest = await saver.getTuple(thread);
    // Simulate a put cut off half way: the newest message entry is missing.
    const items = await scanAll(harness.dynamo.client, tableName);
    const newest = items.filter((i) => i.sk.startsWith("l#")).sort((a, b) => (a.sk < b.sk ? 1 : -1))[0]!;
    await harness.dynamo.client.send(
      new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: "torn" }, sk: { S: newest.sk } } }),
    );

    // Read as the next process does: the one whose put was cut off is gone, and its cache with it.
    const reader = new DynamoDBSaver({ client: harness.dynamo.client, tableName, warn: (m) => warnings.push(m) });
    const served = await reader.getTuple(thread);
    expect(served!.checkpoint.id).not.toBe(latest?.checkpoint.id);
    expect((served!.checkpoint.channel_values.messages as unknown[]).length).toBe(7);
    expect(warnings.join()).toMatch(/incomplete/);
    expect(await reader.getTuple(latest!.config)).toBeUndefined();
  });
});
