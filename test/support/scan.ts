import { QueryCommand, ScanCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";

/** Every item in a table, unmarshalled: for asserting on what the saver stored. */
export async function scanAll(client: DynamoDBClient, tableName: string): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, any> | undefined;
  do {
    const out = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []).map((i) => unmarshall(i)));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The items of one partition (first page: a test's partitions are small), as DynamoDB returns them. */
export async function partitionItems(client: DynamoDBClient, tableName: string, pk: string) {
  const out = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": { S: pk } },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}
