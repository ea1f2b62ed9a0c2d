import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { batchGetAll, batchWriteAll, type WriteRequest } from "../../../shared/stores/batch";

// UnprocessedKeys and UnprocessedItems come back with a 200 when a response reaches its size cap
// (BatchGetItem's 16 MB; dynalite's about 1.4 MB) or a partition is throttled. A probe's finding: a
// checkpoint of 42 parts of 350 KB read 4 parts per call locally, and the fixed 10 attempts gave up
// on a read that was still progressing, so every later turn of that session answered 503.
const policy = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 };
const keys = Array.from({ length: 12 }, (_, i) => ({ pk: "s", sk: `x#${i}` }));

/** A table answering at most `perCall` items of each call (0: none), the rest unprocessed. */
function table(perCall: number) {
  const calls: string[] = [];
  const doc = {
    send: async (command: { constructor: { name: string }; input: any }) => {
      calls.push(command.constructor.name);
      if (command.constructor.name === "BatchGetCommand") {
        const asked = command.input.RequestItems.t.Keys as Record<string, unknown>[];
        return {
          Responses: { t: asked.slice(0, perCall).map((k) => ({ ...k, v: 1 })) },
          ...(asked.length > perCall ? { UnprocessedKeys: { t: { Keys: asked.slice(perCall) } } } : {}),
        };
      }
      const asked = command.input.RequestItems.t as WriteRequest[];
      return asked.length > perCall ? { UnprocessedItems: { t: asked.slice(perCall) } } : {};
    },
  };
  return { doc: doc as unknown as DynamoDBDocumentClient, calls };
}

describe("batchGetAll", () => {
  it("keeps asking while each answer brings something, past maxAttempts in all", async () => {
    const { doc, calls } = table(1);
    const items = await batchGetAll(doc, "t", keys, policy);
    expect(items.map((i) => i.sk)).toEqual(keys.map((k) => k.sk));
    expect(calls).toHaveLength(12);
  });

  it("gives up, loudly, after maxAttempts answers in a row that bring nothing", async () => {
    const { doc, calls } = table(0);
    await expect(batchGetAll(doc, "t", keys, policy)).rejects.toThrow(
      "DynamoDB left 12 key(s) unprocessed after 3 attempts without progress",
    );
    expect(calls).toHaveLength(3);
  });
});

describe("batchWriteAll", () => {
  const writes: WriteRequest[] = keys.map((k) => ({ PutRequest: { Item: k } }));

  it("keeps sending while each answer takes something", async () => {
    const { doc, calls } = table(1);
    await batchWriteAll(doc, "t", writes, policy);
    expect(calls).toHaveLength(12);
  });

  it("gives up after maxAttempts answers in a row that take nothing", async () => {
    const { doc } = table(0);
    await expect(batchWriteAll(doc, "t", writes, policy)).rejects.toThrow(
      "DynamoDB left 12 write(s) unprocessed after 3 attempts without progress",
    );
  });
});
