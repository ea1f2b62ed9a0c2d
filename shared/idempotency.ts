import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { IdempotencyConfig } from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import { createTable } from "./stores/create-table";

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
  await createTable(client, tableName, IDEMPOTENCY_TABLE);
}
