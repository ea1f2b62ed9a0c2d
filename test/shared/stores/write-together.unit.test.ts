import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { writeTogether } from "../../../shared/stores/write-together";

// DynamoDB's documented answers to TransactWriteItems, as the SDK hands them over: a cancellation
// names each part's reason; a conflict with another write in flight (TransactionConflict) is one
// the SDK does not retry.

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    $metadata: { httpStatusCode: 400 },
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(", ")}]`,
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

function answering(...answers: unknown[]) {
  const sent: unknown[] = [];
  const doc = {
    send: async (command: unknown) => {
      sent.push(command);
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return {};
    },
  } as unknown as DynamoDBDocumentClient;
  return { doc, sent };
}

const items = [{ Update: { TableName: "t", Key: { pk: "a" }, UpdateExpression: "ADD n :n" } }];

describe("writeTogether (one TransactWriteItems)", () => {
  it("tries a transaction that conflicted with another write again, until it is written", async () => {
    const { doc, sent } = answering(
      cancelled("TransactionConflict", "None"),
      cancelled("None", "TransactionConflict"),
      {},
    );
    expect(await writeTogether(doc, items)).toBeUndefined();
    expect(sent).toHaveLength(3);
  });

  it("answers a refused condition with each part's reason, and sends it once", async () => {
    const { doc, sent } = answering(cancelled("None", "ConditionalCheckFailed"));
    expect(await writeTogether(doc, items)).toEqual(["None", "ConditionalCheckFailed"]);
    expect(sent).toHaveLength(1);
  });

  it("throws what is neither: a cancellation for another reason, or any other error", async () => {
    await expect(writeTogether(answering(cancelled("ThrottlingError", "None")).doc, items)).rejects.toBeInstanceOf(
      TransactionCanceledException,
    );
    await expect(writeTogether(answering(new Error("socket hang up")).doc, items)).rejects.toThrow("socket hang up");
  });

  it("gives up on a conflict that never clears, loudly", async () => {
    const { doc, sent } = answering(...Array.from({ length: 40 }, () => cancelled("TransactionConflict")));
    await expect(writeTogether(doc, items)).rejects.toBeInstanceOf(TransactionCanceledException);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.length).toBeLessThan(40);
  });
});
