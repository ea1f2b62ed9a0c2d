import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import { createCheckpointTable, DynamoDBSaver, type DynamoDBSaverOptions } from "../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";

/** A dynalite server and a fresh checkpoint table per saver, so savers never see each other's data. */
export async function checkpointHarness() {
  const dynamo: LocalDynamo = await startLocalDynamo();
  return {
    dynamo,
    async newSaver(options: Partial<Omit<DynamoDBSaverOptions, "client" | "tableName">> = {}) {
      const tableName = `checkpoints-${randomUUID()}`;
      await createCheckpointTable(dynamo.client, tableName);
      const saver = new DynamoDBSaver({ client: dynamo.client, tableName, warn: () => {}, ...options });
      return { saver, tableName };
    },
    dropTable: (tableName: string) => dynamo.client.send(new DeleteTableCommand({ TableName: tableName })),
    close: () => dynamo.close(),
  };
}
