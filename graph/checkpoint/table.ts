import {
  CreateTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { CHECKPOINT_TABLE } from "./schema";

/**
 * Creates the checkpoint table with the key schema the CDK stack deploys
 * (on-demand, pk/sk strings, TTL on `expires_at`). Used by the local stack and
 * the tests; in AWS the stack owns the table. An existing table is left as is.
 */
export async function createCheckpointTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: CHECKPOINT_TABLE.partitionKey, AttributeType: "S" },
          { AttributeName: CHECKPOINT_TABLE.sortKey, AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: CHECKPOINT_TABLE.partitionKey, KeyType: "HASH" },
          { AttributeName: CHECKPOINT_TABLE.sortKey, KeyType: "RANGE" },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: CHECKPOINT_TABLE.ttlAttribute, Enabled: true },
      }),
    );
  } catch (err) {
    const name = (err as { name?: string }).name;
    // Enabling TTL twice is rejected with a ValidationException: that state is the one we want.
    // dynalite (the local stack) does not implement TTL at all: there items simply never expire.
    if (name !== "ValidationException" && name !== "UnknownOperationException") throw err;
  }
}
