import type { PGlite } from "@electric-sql/pglite";
import { randomUUID } from "node:crypto";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { startLocalPostgres } from "../../infra/local/postgres";
import { SqlConversationStore } from "../../shared/stores/sql-conversations";

/** dynalite and an in-memory PGlite with the migrations applied, shared by one test file. */
export async function backendsHarness() {
  const [dynamo, postgres]: [LocalDynamo, PGlite] = await Promise.all([startLocalDynamo(), startLocalPostgres()]);
  return {
    dynamo,
    postgres,
    conversations: new SqlConversationStore(postgres),
    async checkpointer() {
      const tableName = `checkpoints-${randomUUID()}`;
      await createCheckpointTable(dynamo.client, tableName);
      return new DynamoDBSaver({ client: dynamo.client, tableName });
    },
    close: async () => {
      await postgres.close();
      await dynamo.close();
    },
  };
}
