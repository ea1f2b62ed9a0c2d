import { type BatchWriteItemCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { checkpointHarness } from "../../support/dynamo";
import { scanAll } from "../../support/scan";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";

let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

async function withCheckpoint(saver: DynamoDBSaver, thread: string) {
  return saver.put(
    { configurable: { thread_id: thread, checkpoint_ns: "" } },
    { ...emptyCheckpoint(), id: uuid6(0) },
    { source: "input", step: -1, parents: {} },
    {},
  );
}

/**
 * A client that makes DynamoDB hand back part of every BatchWriteItem as
 * UnprocessedItems, as it does under throttling, for the first `times` calls.
 */
function flakyClient(endpoint: string, times: number, keep = 1) {
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
  });
  let calls = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "BatchWriteItemCommand" || calls++ >= times) return next(args);
      const input = args.input as BatchWriteItemCommand["input"];
      const [table, requests] = Object.entries(input.RequestItems!)[0]!;
      if (keep === 0)
        return { output: { UnprocessedItems: { [table]: requests }, $metadata: {} }, response: {} } as any;
      const result = await next({ ...args, input: { ...input, RequestItems: { [table]: requests.slice(0, keep) } } });
      (result.output as any).UnprocessedItems = requests.length > keep ? { [table]: requests.slice(keep) } : {};
      return result;
    },
    { step: "initialize", name: "unprocessed" },
  );
  return client;
}

describe("putWrites", () => {
  it("stores nothing twice when retried", async () => {
    const { saver, tableName } = await harness.newSaver();
    const config = await withCheckpoint(saver, "retry");
    const writes: [string, unknown][] = [
      ["messages", ["hello"]],
      ["branch:to:agent", null],
      ["__error__", "boom"],
    ];
    await saver.putWrites(config, writes, "task-1", "~__pregel_pull, agent");
    await saver.putWrites(config, writes, "task-1", "~__pregel_pull, agent");
    const stored = (await scanAll(harness.dynamo.client, tableName)).filter((i) => i.sk.includes("#w#"));
    expect(stored).toHaveLength(3);
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([
      ["task-1", "__error__", "boom"],
      ["task-1", "messages", ["hello"]],
      ["task-1", "branch:to:agent", null],
    ]);
  });

  it("retries unprocessed items with backoff until all are stored", async () => {
    const { tableName } = await harness.newSaver();
    const client = flakyClient(harness.dynamo.endpoint, 5);
    const saver = new DynamoDBSaver({ client, tableName, retry: { baseDelayMs: 1 } });
    const config = await withCheckpoint(saver, "flaky");
    const writes = Array.from({ length: 30 }, (_, i) => [`ch${i}`, i] as [string, unknown]);
    await saver.putWrites(config, writes, "task-1");
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toHaveLength(30);
  });

  it("throws rather than dropping writes DynamoDB keeps refusing", async () => {
    const { tableName } = await harness.newSaver();
    const client = flakyClient(harness.dynamo.endpoint, 1000, 0);
    const saver = new DynamoDBSaver({ client, tableName, retry: { baseDelayMs: 1, maxAttempts: 3 } });
    const config = { configurable: { thread_id: "refused", checkpoint_ns: "", checkpoint_id: uuid6(0) } };
    await expect(
      saver.putWrites(
        config,
        [
          ["a", 1],
          ["b", 2],
        ],
        "task-1",
      ),
    ).rejects.toThrow(/unprocessed after 3 attempts/);
  });
});
