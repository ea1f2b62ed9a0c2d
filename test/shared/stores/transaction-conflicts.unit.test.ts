import { DynamoDBClient, TransactWriteItemsCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { Readable } from "node:stream";
import { retryingTransactionConflicts } from "../../../shared/stores/transaction-conflicts";

// DynamoDB's documented answer to a single-item write on an item a transaction in flight includes:
// 400 TransactionConflictException. The SDK's standard retry does not retry it on its own.

const conflict = JSON.stringify({
  __type: "com.amazonaws.dynamodb.v20120810#TransactionConflictException",
  message: "Transaction is ongoing for the item",
});

function clientAnswering(answers: ("conflict" | "ok" | "lost")[]) {
  const sent: string[] = [];
  const bodies: string[] = [];
  const client = new DynamoDBClient({
    region: "local",
    endpoint: "http://127.0.0.1:1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    requestHandler: {
      handle: async (request: { body: string }) => {
        const answer = answers.shift() ?? "ok";
        sent.push(answer);
        bodies.push(request.body);
        if (answer === "lost") throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        return {
          response: {
            statusCode: answer === "ok" ? 200 : 400,
            headers: { "content-type": "application/x-amz-json-1.0" },
            body: Readable.from([Buffer.from(answer === "ok" ? "{}" : conflict)]),
          },
        };
      },
    } as never,
  });
  return { client, sent, bodies };
}

const update = new UpdateItemCommand({
  TableName: "tbl",
  Key: { pk: { S: "a" }, sk: { S: "b" } },
  UpdateExpression: "ADD n :one",
  ExpressionAttributeValues: { ":one": { N: "1" } },
});

describe("a TransactionConflictException on a single-item write", () => {
  it("is tried again by a client made to, until the transaction it met is over", async () => {
    const { client, sent } = clientAnswering(["conflict", "conflict", "ok"]);
    await retryingTransactionConflicts(client).send(update);
    expect(sent).toEqual(["conflict", "conflict", "ok"]);
  });

  it("is thrown once the client's attempts are spent", async () => {
    const { client, sent } = clientAnswering(Array.from({ length: 10 }, () => "conflict" as const));
    await expect(retryingTransactionConflicts(client).send(update)).rejects.toMatchObject({
      name: "TransactionConflictException",
    });
    expect(sent).toHaveLength(await client.config.maxAttempts());
  });

  it("is not tried again by a client left as the SDK makes it", async () => {
    const { client, sent } = clientAnswering(["conflict", "ok"]);
    await expect(client.send(update)).rejects.toMatchObject({ name: "TransactionConflictException" });
    expect(sent).toHaveLength(1);
  });
});

describe("a transaction whose answer was lost", () => {
  // A release that carries a token count, tried again after its first attempt committed, must not
  // count twice: the SDK gives each TransactWriteItems a ClientRequestToken and resends the same
  // one, which DynamoDB answers as done without writing again (for 10 minutes).
  it("is sent again with the same ClientRequestToken", async () => {
    const { client, bodies } = clientAnswering(["lost", "ok"]);
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [{ Update: { ...update.input, UpdateExpression: "ADD n :one" } as never }],
      }),
    );
    const tokens = bodies.map((body) => JSON.parse(body).ClientRequestToken as string);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(tokens[1]).toBe(tokens[0]);
  });
});
