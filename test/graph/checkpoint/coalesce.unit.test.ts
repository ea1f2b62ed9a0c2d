import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { DEFAULT_RETRY } from "../../../shared/stores/batch";
import { WriteCoalescer } from "../../../graph/checkpoint/coalesce";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { meter } from "../../support/dynamo-meter";

// Concurrent puts share one BatchWriteItem; each caller still waits for its own items.

let dynamo: LocalDynamo;
let doc: DynamoDBDocumentClient;
let tableName: string;
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  doc = DynamoDBDocumentClient.from(dynamo.client);
  tableName = `coalesce-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, tableName);
});
afterAll(() => dynamo.close());

const read = async (sk: string) =>
  (await doc.send(new GetCommand({ TableName: tableName, Key: { pk: "t", sk }, ConsistentRead: true }))).Item;

describe("WriteCoalescer", () => {
  it("sends puts made in the same turn of the event loop as one request, each resolved once written", async () => {
    const writes = new WriteCoalescer(doc, tableName, DEFAULT_RETRY);
    const m = meter(dynamo.client);
    try {
      await Promise.all([
        writes.put([{ pk: "t", sk: "a", v: 1 }]).then(async () => expect(await read("a")).toMatchObject({ v: 1 })),
        writes.put([
          { pk: "t", sk: "b", v: 2 },
          { pk: "t", sk: "c", v: 3 },
        ]),
      ]);
      expect(m.byCommand.BatchWriteItemCommand).toBe(1);
      expect(await read("c")).toMatchObject({ v: 3 });
      // Later puts are a new flush.
      await writes.put([{ pk: "t", sk: "d", v: 4 }]);
      expect(m.byCommand.BatchWriteItemCommand).toBe(2);
    } finally {
      m.detach();
    }
  });

  it("keeps the last of two puts of the same key (DynamoDB rejects a batch with a duplicate key)", async () => {
    const writes = new WriteCoalescer(doc, tableName, DEFAULT_RETRY);
    await Promise.all([
      writes.put([{ pk: "t", sk: "dup", v: "first" }]),
      writes.put([{ pk: "t", sk: "dup", v: "retry" }]),
    ]);
    expect(await read("dup")).toMatchObject({ v: "retry" });
  });

  it("rejects every caller of a failed flush and writes nothing of it", async () => {
    const writes = new WriteCoalescer(doc, tableName, DEFAULT_RETRY);
    const results = await Promise.allSettled([
      writes.put([{ pk: "t", sk: "ok-but-shared", v: 1 }]),
      writes.put([{ pk: "t", sk: "bad", v: "x".repeat(410_000) }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(await read("ok-but-shared")).toBeUndefined();
  });

  it("splits more than 25 items into several requests", async () => {
    const writes = new WriteCoalescer(doc, tableName, DEFAULT_RETRY);
    const items = Array.from({ length: 30 }, (_, i) => ({ pk: "t", sk: `many-${i}`, v: i }));
    await Promise.all([writes.put(items.slice(0, 20)), writes.put(items.slice(20))]);
    expect(await read("many-29")).toMatchObject({ v: 29 });
    expect(await read("many-0")).toMatchObject({ v: 0 });
  });
});
