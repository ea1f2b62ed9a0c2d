import type { PGlite } from "@electric-sql/pglite";
import { randomUUID } from "node:crypto";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../infra/local/dynamo";
import { startLocalPostgres } from "../../infra/local/postgres";
import { SessionLeases } from "../../shared/stores/session-lease";
import { SessionOwners } from "../../shared/stores/session-owners";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { RpcConversationStore } from "../../shared/stores/rpc-conversations";
import { RpcUserData } from "../../shared/stores/user-data";

/** dynalite and an in-memory PGlite with the migrations applied, shared by one test file. */
export async function backendsHarness() {
  const [dynamo, postgres]: [LocalDynamo, PGlite] = await Promise.all([startLocalDynamo(), startLocalPostgres()]);
  return {
    dynamo,
    postgres,
    conversations: new RpcConversationStore(sqlRpc(postgres)),
    store: new RpcAgentStore(sqlRpc(postgres)),
    userData: new RpcUserData(sqlRpc(postgres)),
    async checkpointer() {
      const tableName = `checkpoints-${randomUUID()}`;
      await createCheckpointTable(dynamo.client, tableName);
      return new DynamoDBSaver({ client: dynamo.client, tableName });
    },
    /** A checkpointer and the session registry on one fresh table, as the chat runtime wires them. */
    async stateTables() {
      const tableName = `state-${randomUUID()}`;
      await createCheckpointTable(dynamo.client, tableName);
      return {
        checkpointer: new DynamoDBSaver({ client: dynamo.client, tableName }),
        owners: new SessionOwners(dynamo.client, tableName),
        leases: new SessionLeases(dynamo.client, tableName),
        tableName,
      };
    },
    close: async () => {
      await postgres.close();
      await dynamo.close();
    },
  };
}
