import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalPostgres } from "../../../infra/local/postgres";

/** Every function the migrations declare, with its argument names: what a migrated database has. */
const declaredFunctions = async (db: Awaited<ReturnType<typeof startLocalPostgres>>) =>
  (
    await db.query<{ sig: string }>(
      `select p.proname || '(' || coalesce(array_to_string(p.proargnames, ','), '') || ')' as sig
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' order by 1`,
    )
  ).rows.map((r) => r.sig);

describe("local Postgres", () => {
  const dir = mkdtempSync(join(tmpdir(), "local-postgres-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts a new database migrated, from the snapshot, in memory and in a fresh folder alike", async () => {
    const memory = await startLocalPostgres();
    const folder = await startLocalPostgres(join(dir, "pg"));
    try {
      const functions = await declaredFunctions(memory);
      expect(functions).toEqual(expect.arrayContaining([expect.stringMatching(/^insert_memory\(p_user_id,/)]));
      expect(await declaredFunctions(folder)).toEqual(functions);
      // the snapshot is a copy: a write to one database is not seen by another
      await memory.query("insert into user_context (user_id, plan) values ('snapshot-probe', 'pro')");
      expect((await folder.query("select 1 from user_context where user_id = 'snapshot-probe'")).rows).toHaveLength(0);
      await folder.query("insert into user_context (user_id, plan) values ('kept', 'team')");
    } finally {
      await memory.close();
      await folder.close();
    }
  });

  it("opens an existing folder as it is, keeping its rows", async () => {
    const again = await startLocalPostgres(join(dir, "pg"));
    try {
      expect((await again.query("select plan from user_context where user_id = 'kept'")).rows).toEqual([
        { plan: "team" },
      ]);
    } finally {
      await again.close();
    }
  });
});
