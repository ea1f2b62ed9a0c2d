import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createTable } from "../../shared/stores/create-table";
import { CHECKPOINT_TABLE } from "./schema";

/** The checkpoint table as the CDK stack deploys it (pk/sk strings, TTL on `expires_at`). */
export async function createCheckpointTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await createTable(client, tableName, CHECKPOINT_TABLE);
}
