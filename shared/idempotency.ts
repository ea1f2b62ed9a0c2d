import {
  CreateTableCommand,
  ResourceInUseException,
  waitUntilTableExists,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { IdempotencyConfig } from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";

/** Powertools' default layout: partition key `id`, TTL on `expiration`. The CDK stack uses the same. */
export const IDEMPOTENCY_TABLE = { partitionKey: "id", ttlAttribute: "expiration" } as const;

/** Records of processed queue messages, keyed by a field of the message body. */
export function idempotency(client: DynamoDBClient, tableName: string, key: string) {
  return {
    persistenceStore: new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client }),
    config: new IdempotencyConfig({
      eventKeyJmesPath: key,
      expiresAfterSeconds: 7 * 86_400,
      throwOnNoIdempotencyKey: true,
    }),
  };
}

/** The local stack's and tests' copy of the table the stack deploys. */
export async function createIdempotencyTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, AttributeType: "S" }],
        KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: "HASH" }],
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
}
