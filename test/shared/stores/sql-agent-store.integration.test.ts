import { vectorLiteral } from "../../../shared/stores/agent-store";
import { SqlAgentStore } from "../../../shared/stores/sql-agent-store";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { agentStoreContract } from "./agent-store-contract";
import type { PGlite } from "@electric-sql/pglite";

const dbs: PGlite[] = [];
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
});

agentStoreContract("SQL adapter on PGlite", async () => {
  const db = await startLocalPostgres();
  dbs.push(db);
  return {
    store: new SqlAgentStore(db),
    supersede: async (oldId, newId) => {
      await db.query("update agent_memories set superseded_by = $2 where id = $1", [oldId, newId]);
    },
    seedUserContext: async (userId, plan, usage, preferences) => {
      await db.query("insert into user_context (user_id, plan, usage, preferences) values ($1, $2, $3, $4)", [
        userId,
        plan,
        usage,
        preferences,
      ]);
    },
    seedKnowledge: async (chunks) => {
      for (const c of chunks) {
        await db.query(
          "insert into knowledge_chunks (document_id, source, chunk_index, content, embedding) values ($1, $2, $3, $4, $5::vector)",
          [c.documentId, c.source, c.index, c.content, vectorLiteral(c.embedding)],
        );
      }
    },
  };
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
      "execution_traces",
      "knowledge_chunks",
      "knowledge_documents",
      "user_context",
    ]);
    for (const row of rows) expect(row).toMatchObject({ relrowsecurity: true, policies: 0 });
  });
});
