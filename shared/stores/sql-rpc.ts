import type { Rpc } from "./rpc";
import type { SqlClient } from "./sql";
import { callStatement, schemaCache } from "./sql-functions";

/**
 * The SQL transport: each call runs as one statement on `db` (PGlite locally and in tests, or any
 * Postgres client that parses json columns), with PostgREST's resolution, argument conversion and
 * result shape (see rpc.ts), so a store behaves the same on both transports.
 */
export function sqlRpc(db: SqlClient): Rpc {
  const schema = schemaCache(db);
  const call = async (fn: string, args: Record<string, unknown>) => {
    try {
      const names = Object.keys(args).filter((k) => args[k] !== undefined);
      const sig = await schema.resolve(fn, names);
      const { rows } = await db.query<{ result: unknown }>(callStatement(sig, names), [JSON.stringify(args)]);
      return rows[0]?.result ?? null;
    } catch (err) {
      throw new Error(`${fn} failed: ${(err as Error).message}`, { cause: err });
    }
  };
  return {
    call,
    // SQL caps no result: the function's own order stands, and one call reads every row.
    allRows: async (fn, args) => (await call(fn, args)) as unknown[],
  };
}
