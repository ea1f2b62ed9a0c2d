/**
 * How the Supabase stores reach Postgres: every read and write is a function of the migrations
 * (supabase/migrations/), called by name with named arguments. Two transports carry the call:
 * PostgREST's /rpc/<name> in Lambda (postgrest.ts) and SQL over any SqlClient locally and in tests
 * (sql-rpc.ts). The stores are written once, over this interface.
 *
 * The arguments travel as JSON, as PostgREST receives them: a jsonb argument takes any JSON value,
 * a vector its text form ("[0.1,0.2]"), an array argument (text[], uuid[]) a JSON array, a
 * timestamptz an ISO string; a key left out takes the function's default.
 *
 * The result is the JSON PostgREST answers with, whichever transport carries the call:
 *   - a set-returning function (`returns table (...)`, `returns setof ...`): an array of its rows
 *     (objects keyed by column), empty when there are none;
 *   - any other function: its value (a string, number, boolean, JSON), null for SQL null or void.
 * Row values are JSON too: a timestamptz is an ISO string, a bigint a number.
 */
export interface Rpc {
  call(fn: string, args: Record<string, unknown>): Promise<unknown>;
  /**
   * Every row of a set-returning function, however many. PostgREST answers a request with at most
   * its `max_rows` (Supabase's default: 1,000) and says nothing of the rest, so a read that can
   * pass that is made in pages, ordered by `orderBy` (a column the rows are unique and stable on).
   */
  allRows(fn: string, args: Record<string, unknown>, orderBy: string): Promise<unknown[]>;
}

/**
 * The functions a store calls and the argument names it sends each, exactly: the signature test
 * checks every entry against the migrations' functions (pg_proc), and `caller` holds the store's
 * calls to its table at compile time.
 */
export type Signatures = Readonly<Record<string, readonly string[]>>;

/** A call's arguments as its table entry names them: every one of them, and no other. */
export type ArgsOf<S extends Signatures, F extends keyof S> = { [K in S[F][number]]: unknown };

/** `rpc.call`, typed by a store's table of signatures. */
export const caller =
  <S extends Signatures>(rpc: Rpc, _signatures: S) =>
  <F extends keyof S & string>(fn: F, args: ArgsOf<S, F>): Promise<unknown> =>
    rpc.call(fn, args);

/** `rpc.allRows`, typed by a store's table of signatures. */
export const allRowsCaller =
  <S extends Signatures>(rpc: Rpc, _signatures: S) =>
  <F extends keyof S & string>(fn: F, args: ArgsOf<S, F>, orderBy: string): Promise<unknown[]> =>
    rpc.allRows(fn, args, orderBy);
