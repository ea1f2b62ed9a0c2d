import {
  CreateTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";

export interface TableKeys {
  partitionKey: string;
  sortKey?: string;
  ttlAttribute?: string;
  /** a global secondary index of string keys, keys only */
  userIndex?: { name: string; partitionKey: string; sortKey: string };
}

/**
 * Creates an on-demand table with string keys and TTL, as the CDK stack deploys it, for the local
 * stack and the tests (in AWS the stack owns its tables). An existing table is left as is.
 */
export async function createTable(client: DynamoDBClient, tableName: string, keys: TableKeys): Promise<void> {
  const names = [keys.partitionKey, ...(keys.sortKey ? [keys.sortKey] : [])];
  const schema = (attributes: string[]) =>
    attributes.map((AttributeName, i) => ({
      AttributeName,
      KeyType: i === 0 ? ("HASH" as const) : ("RANGE" as const),
    }));
  const index = keys.userIndex;
  const indexed = index ? [index.partitionKey, index.sortKey] : [];
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [...new Set([...names, ...indexed])].map((AttributeName) => ({
          AttributeName,
          AttributeType: "S",
        })),
        KeySchema: schema(names),
        ...(index
          ? {
              GlobalSecondaryIndexes: [
                { IndexName: index.name, KeySchema: schema(indexed), Projection: { ProjectionType: "KEYS_ONLY" } },
              ],
            }
          : {}),
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  if (!keys.ttlAttribute) return;
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: keys.ttlAttribute, Enabled: true },
      }),
    );
  } catch (err) {
    const name = (err as { name?: string }).name;
    // Enabling TTL twice is rejected with a ValidationException: that state is the one we want.
    // dynalite (the local stack) does not implement TTL at all: there items simply never expire.
    if (name !== "ValidationException" && name !== "UnknownOperationException") throw err;
  }
}
