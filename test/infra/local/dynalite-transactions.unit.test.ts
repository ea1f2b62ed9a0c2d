import {
  GetItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from "@aws-sdk/client-dynamodb";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { CHECKPOINT_TABLE } from "../../../shared/stores/checkpoint-table";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";

// dynalite 4.0.0 has no TransactWriteItems; infra/local/patches/ adds it, held to what DynamoDB
// documents: all parts or none, every condition checked first, a refusal's reasons per part in
// order (the failed part's item with ReturnValuesOnConditionCheckFailure ALL_OLD), and one
// operation per item.

const TABLE = "transactions";
let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await createCheckpointTable(dynamo.client, TABLE);
});
afterAll(() => dynamo.close());

const key = (pk: string) => ({ pk: { S: pk }, sk: { S: "s" } });
const get = async (pk: string) =>
  (await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: key(pk), ConsistentRead: true }))).Item;
const send = (items: TransactWriteItem[]) =>
  dynamo.client.send(new TransactWriteItemsCommand({ TransactItems: items }));
const put = (pk: string, n: number, extra: Record<string, { S: string }> = {}): TransactWriteItem => ({
  Put: { TableName: TABLE, Item: { ...key(pk), n: { N: String(n) }, ...extra } },
});
const add = (pk: string, n: number, below?: number): TransactWriteItem => ({
  Update: {
    TableName: TABLE,
    Key: key(pk),
    UpdateExpression: "ADD n :n",
    ...(below !== undefined ? { ConditionExpression: "attribute_not_exists(n) OR n < :max" } : {}),
    ExpressionAttributeValues: {
      ":n": { N: String(n) },
      ...(below !== undefined ? { ":max": { N: String(below) } } : {}),
    },
  },
});
const rejection = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeDefined();
  return err as Error & { CancellationReasons?: { Code?: string; Item?: unknown; Message?: string }[] };
};

describe("TransactWriteItems on the local DynamoDB (dynalite, patched)", () => {
  it("writes every part: puts, updates, deletes, and checks that hold", async () => {
    await send([put("a1", 1), put("a2", 2)]);
    await send([
      add("a1", 5),
      { Delete: { TableName: TABLE, Key: key("a2") } },
      put("a3", 3),
      {
        ConditionCheck: {
          TableName: TABLE,
          Key: key("a3-absent"),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
    ]);
    expect((await get("a1"))?.n).toEqual({ N: "6" });
    expect(await get("a2")).toBeUndefined();
    expect((await get("a3"))?.n).toEqual({ N: "3" });
    expect(await get("a3-absent")).toBeUndefined();
  });

  it("writes nothing when one condition fails, and names each part's reason in order", async () => {
    await send([put("b1", 1), put("b2", 10), put("b3", 3)]);
    const err = await rejection(
      send([
        add("b1", 1),
        {
          ConditionCheck: {
            TableName: TABLE,
            Key: key("b2"),
            ConditionExpression: "n < :max",
            ExpressionAttributeValues: { ":max": { N: "5" } },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
        { Delete: { TableName: TABLE, Key: key("b3") } },
      ]),
    );
    expect(err).toBeInstanceOf(TransactionCanceledException);
    expect(err.CancellationReasons?.map((r) => r.Code)).toEqual(["None", "ConditionalCheckFailed", "None"]);
    expect(err.CancellationReasons?.[1]?.Item).toEqual({ ...key("b2"), n: { N: "10" } });
    expect(err.CancellationReasons?.[0]?.Item).toBeUndefined();
    expect(err.message).toMatch(/Transaction cancelled.*\[None, ConditionalCheckFailed, None\]/);
    expect((await get("b1"))?.n).toEqual({ N: "1" });
    expect(await get("b3")).toBeDefined();
  });

  it("returns no item for a failed part that did not ask for it", async () => {
    await send([put("c1", 3)]);
    const err = await rejection(send([add("c1", 1, 2)]));
    expect(err.CancellationReasons).toEqual([
      { Code: "ConditionalCheckFailed", Message: "The conditional request failed" },
    ]);
    expect((await get("c1"))?.n).toEqual({ N: "3" });
  });

  it("refuses two operations on one item, an empty or oversized list, a part of two kinds, and bad expressions", async () => {
    await send([put("d1", 1)]);
    const refused = [
      [add("d1", 1), { Delete: { TableName: TABLE, Key: key("d1") } }],
      [put("d1", 7), add("d1", 1)],
      [],
      Array.from({ length: 101 }, (_, i) => put(`d-many-${i}`, i)),
      [{ ...add("d1", 1), ...put("d2", 1) }],
      [{ Update: { TableName: TABLE, Key: key("d1"), UpdateExpression: "ADD n :missing" } }],
      [{ ConditionCheck: { TableName: TABLE, Key: key("d1") } } as unknown as TransactWriteItem],
      [{ Put: { TableName: TABLE, Item: { pk: { S: "d3" } } } }],
    ] as TransactWriteItem[][];
    for (const items of refused) {
      const err = await rejection(send(items));
      expect(err.name).toBe("ValidationException");
    }
    expect((await get("d1"))?.n).toEqual({ N: "1" });
    expect(await get("d-many-0")).toBeUndefined();
    expect(await get("d2")).toBeUndefined();
  });

  // A review's finding: an Update part was not held to UpdateItem's checks on what it may change.
  it("refuses an update of a key attribute, as UpdateItem does, writing nothing", async () => {
    await send([put("k1", 1)]);
    const err = await rejection(
      send([
        put("k2", 2),
        {
          Update: {
            TableName: TABLE,
            Key: key("k1"),
            UpdateExpression: "SET sk = :b",
            ExpressionAttributeValues: { ":b": { S: "other" } },
          },
        },
      ]),
    );
    expect(err.name).toBe("ValidationException");
    expect(await get("k2")).toBeUndefined();
    expect((await get("k1"))?.sk).toEqual({ S: "s" });
  });

  it("writes nothing when an update would make an item too large", async () => {
    const big = "x".repeat(300 * 1024);
    await send([put("e1", 1, { blob: { S: big } })]);
    const err = await rejection(
      send([
        put("e2", 2),
        {
          Update: {
            TableName: TABLE,
            Key: key("e1"),
            UpdateExpression: "SET more = :b",
            ExpressionAttributeValues: { ":b": { S: big } },
          },
        },
      ]),
    );
    expect(err.name).toBe("ValidationException");
    expect(await get("e2")).toBeUndefined();
  });

  it("answers a missing table as DynamoDB does, writing nothing", async () => {
    const err = await rejection(send([put("f1", 1), { Put: { TableName: "no-such-table", Item: key("f2") } }]));
    expect(err.name).toBe("ResourceNotFoundException");
    expect(await get("f1")).toBeUndefined();
  });

  it("keeps the table's indexes in step with what it writes", async () => {
    const { name, partitionKey } = CHECKPOINT_TABLE.userIndex;
    await send([put("g1", 1, { [partitionKey]: { S: "gina" } })]);
    await send([{ Delete: { TableName: TABLE, Key: key("g1") } }, put("g2", 2, { [partitionKey]: { S: "gina" } })]);
    const out = await dynamo.client.send(
      new QueryCommand({
        TableName: TABLE,
        IndexName: name,
        KeyConditionExpression: "#u = :u",
        ExpressionAttributeNames: { "#u": partitionKey },
        ExpressionAttributeValues: { ":u": { S: "gina" } },
      }),
    );
    expect(out.Items?.map((i) => i.pk?.S)).toEqual(["g2"]);
  });

  it("lets exactly as many concurrent transactions in as a condition allows, across items in either order", async () => {
    const attempts = Array.from({ length: 24 }, (_, i) =>
      send(i % 2 ? [add("h-count", 1, 5), add("h-other", 1)] : [add("h-other", 1), add("h-count", 1, 5)]).then(
        () => "in",
        (err: unknown) => (err instanceof TransactionCanceledException ? "refused" : err),
      ),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o === "in")).toHaveLength(5);
    expect(outcomes.filter((o) => o === "refused")).toHaveLength(19);
    expect((await get("h-count"))?.n).toEqual({ N: "5" });
    expect((await get("h-other"))?.n).toEqual({ N: "5" });
  });
});

describe("TransactWriteItems sent again with its ClientRequestToken (dynalite, patched)", () => {
  // A review's finding: the same token sent again while the first was still being written ran twice.
  it("is written once when sent again while the first is still being written", async () => {
    const token = "sent-twice-at-once";
    const again = () =>
      dynamo.client.send(new TransactWriteItemsCommand({ TransactItems: [add("j1", 1)], ClientRequestToken: token }));
    // The second meets TransactionInProgressException, which the SDK retries until the first is done.
    await Promise.all([again(), again()]);
    expect((await get("j1"))?.n).toEqual({ N: "1" });
  });

  it("is answered as done without writing again, and refused with another payload", async () => {
    const token = "release-of-turn-1";
    await dynamo.client.send(
      new TransactWriteItemsCommand({ TransactItems: [add("i1", 1)], ClientRequestToken: token }),
    );
    await dynamo.client.send(
      new TransactWriteItemsCommand({ TransactItems: [add("i1", 1)], ClientRequestToken: token }),
    );
    expect((await get("i1"))?.n).toEqual({ N: "1" });
    const err = await rejection(
      dynamo.client.send(new TransactWriteItemsCommand({ TransactItems: [add("i1", 2)], ClientRequestToken: token })),
    );
    expect(err.name).toBe("IdempotentParameterMismatchException");
    expect((await get("i1"))?.n).toEqual({ N: "1" });
  });
});
