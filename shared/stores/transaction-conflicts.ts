import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";

/**
 * Makes `client` retry a TransactionConflictException, as it retries throttling: DynamoDB answers
 * a PutItem, UpdateItem or DeleteItem so when a TransactWriteItems in flight includes the same
 * item (a turn's release carries its token count: ReleaseOptions.alongside), and the SDK's
 * standard retry does not count it as retryable. A queued turn's lease attempt, or another
 * session's admission on the same usage item, then waits a moment instead of failing. Hand-written
 * because the SDK has no setting for it: the error is marked with the trait its retry strategy
 * reads (`$retryable`), beneath the retry middleware so every attempt is seen.
 */
export function retryingTransactionConflicts(client: DynamoDBClient): DynamoDBClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        if ((err as { name?: string }).name === "TransactionConflictException")
          (err as { $retryable?: object }).$retryable = {};
        throw err;
      }
    },
    { step: "finalizeRequest", priority: "low", name: "retryTransactionConflicts" },
  );
  return client;
}
