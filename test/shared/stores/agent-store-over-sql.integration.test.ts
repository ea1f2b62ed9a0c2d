import type { PGlite } from "@electric-sql/pglite";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { agentStoreContractOver } from "./agent-store-contract";

// The store over the SQL transport, as the local stack runs it (the PostgREST transport's run is
// agent-store-over-postgrest.integration.test.ts).
agentStoreContractOver("agent store over SQL on PGlite", sqlRpc);

const dbs: PGlite[] = [];
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
});

describe("row level security", () => {
  it("is enabled on every table, with no policy for anon or authenticated", async () => {
    const db = await startLocalPostgres();
    dbs.push(db);
    const { rows } = await db.query<{ relname: string; relrowsecurity: boolean; policies: number }>(
      `select c.relname, c.relrowsecurity,
              (select count(*)::int from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname) as policies
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind = 'r'
        order by c.relname`,
    );
    expect(rows.map((r) => r.relname)).toEqual([
      "agent_conversations",
      "agent_memories",
      "agent_sessions",
      "agent_store_items",
      "erased_sessions",
      "execution_traces",
      "forgotten_memories",
      "knowledge_chunks",
      "knowledge_documents",
      "user_context",
    ]);
    for (const row of rows) expect(row).toMatchObject({ relrowsecurity: true, policies: 0 });
  });
});
