import { postgrestRpc, supabaseRest } from "../../shared/stores/postgrest";
import type { Rpc } from "../../shared/stores/rpc";
import type { SqlClient } from "../../shared/stores/sql";
import { AmbiguousFunction, callStatement, FunctionNotFound, schemaCache } from "../../shared/stores/sql-functions";

/** Where the stand-in answers (supabaseRest adds /rest/v1), and the service key it takes. */
export const STAND_IN_URL = "http://supabase.stand-in";
export const STAND_IN_KEY = "service-role-key";

/** Supabase's default `max_rows` (supabase/config.toml sets the same). */
export const STAND_IN_MAX_ROWS = 1000;

/** The production transport, postgrest-js and all, reaching the stand-in over `db`. */
export const postgrestOver = (db: SqlClient, maxRows = STAND_IN_MAX_ROWS): Rpc =>
  postgrestRpc(supabaseRest(STAND_IN_URL, STAND_IN_KEY, postgrestStandIn(db, STAND_IN_KEY, maxRows)));

/**
 * Supabase's PostgREST as a fetch, over PGlite with the migrations: POST /rest/v1/rpc/<fn> as
 * PostgREST documents it (docs.postgrest.org, "Functions as RPC" and "Errors"). The body is a JSON
 * object of named arguments; the function is found by its name and those names (404 PGRST202
 * when none takes them), its arguments read from the JSON as it declares them; a set-returning
 * function answers with an array of rows, a void one with 204, any other with its value; a
 * Postgres error with {code, message, details, hint} and PostgREST's status for its SQLSTATE.
 * The service key is checked as Supabase's gateway and PostgREST's JWT check do together.
 *
 * A set-returning function's rows are ordered, offset and limited by the `order`, `offset` and
 * `limit` query parameters ("Functions as RPC": its result can be filtered and paged as a table's),
 * and never more than `maxRows` come back ("Configuration": db-max-rows caps every read, with no
 * sign of what it left out).
 *
 * Only what the stores use: POST with a single JSON object (no GET calls, no table endpoints, no
 * `Prefer: params=single-object`), in the public schema.
 */
export function postgrestStandIn(db: SqlClient, serviceKey: string, maxRows = STAND_IN_MAX_ROWS): typeof fetch {
  const schema = schemaCache(db);
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    if (headers.get("apikey") !== serviceKey || headers.get("authorization") !== `Bearer ${serviceKey}`)
      return error(401, "PGRST301", "No suitable key or wrong key type");
    const route = /^\/rest\/v1\/rpc\/([^/]+)$/.exec(url.pathname);
    if (!route) return error(404, "PGRST125", `Invalid path specified in request URL: ${url.pathname}`);
    if ((init?.method ?? "GET") !== "POST")
      return error(405, "PGRST101", "The stand-in calls functions with POST only");
    if (!/^application\/json\b/.test(headers.get("content-type") ?? ""))
      return error(415, "PGRST107", `Content-Type not acceptable: ${headers.get("content-type") ?? "none"}`);
    const fn = decodeURIComponent(route[1]!);
    const body = typeof init?.body === "string" ? init.body : "";
    let args: unknown;
    try {
      args = body.trim() === "" ? {} : JSON.parse(body);
    } catch {
      return error(400, "PGRST102", "Empty or invalid json");
    }
    if (typeof args !== "object" || args === null || Array.isArray(args))
      return error(400, "PGRST102", "The request body must be a JSON object of named arguments");
    const names = Object.keys(args);
    try {
      const sig = await schema.resolve(fn, names);
      const { rows } = await db.query<{ result: unknown }>(callStatement(sig, names), [
        body.trim() === "" ? "{}" : body,
      ]);
      if (sig.returnsVoid) return new Response(null, { status: 204 });
      const result = rows[0]?.result ?? null;
      return json(200, sig.returnsSet ? paged(result as Record<string, unknown>[], url.searchParams, maxRows) : result);
    } catch (err) {
      if (err instanceof FunctionNotFound) return error(404, err.code, err.message, err.details, err.hint);
      if (err instanceof AmbiguousFunction) return error(300, err.code, err.message);
      const pg = err as { code?: string; message: string; detail?: string; hint?: string };
      return error(pg.code ? statusOf(pg.code) : 500, pg.code ?? "", pg.message, pg.detail, pg.hint);
    }
  };
}

/**
 * `<column>=gt.<value>` filters, order=a.asc,b.desc, then offset and limit, as PostgREST reads
 * them; then at most maxRows. A filter's value is text in the URL: it compares as a number
 * against a number column.
 */
function paged(all: Record<string, unknown>[], params: URLSearchParams, maxRows: number) {
  const RESERVED = new Set(["order", "offset", "limit", "select"]);
  const rows = all.filter((row) =>
    [...params].every(([column, filter]) => {
      if (RESERVED.has(column)) return true;
      const [op, ...rest] = filter.split(".");
      if (op !== "gt") throw new Error(`the stand-in filters with gt only, not ${op}`);
      const value = rest.join(".");
      const cell = row[column];
      return typeof cell === "number" ? cell > Number(value) : String(cell) > value;
    }),
  );
  const order = (params.get("order") ?? "")
    .split(",")
    .filter(Boolean)
    .map((term) => {
      const [column, ...modifiers] = term.split(".");
      return { column: column!, sign: modifiers.includes("desc") ? -1 : 1 };
    });
  const sorted = [...rows].sort((a, b) => {
    for (const { column, sign } of order) {
      const [x, y] = [a[column], b[column]] as [string | number, string | number];
      if (x !== y) return (x < y ? -1 : 1) * sign;
    }
    return 0;
  });
  const offset = Number(params.get("offset") ?? 0);
  const limit = Math.min(Number(params.get("limit") ?? maxRows), maxRows);
  return sorted.slice(offset, offset + limit);
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });

const error = (status: number, code: string, message: string, details?: string | null, hint?: string | null) =>
  json(status, { code, message, details: details ?? null, hint: hint ?? null });

/** PostgREST's HTTP status for a Postgres SQLSTATE (its documented table; 42501 as the service role: 403). */
export function statusOf(sqlstate: string): number {
  const exact: Record<string, number> = {
    "23503": 409,
    "23505": 409,
    "25006": 405,
    "53400": 500,
    P0001: 400,
    "42883": 404,
    "42P01": 404,
    "42P17": 500,
    "42501": 403,
  };
  if (exact[sqlstate]) return exact[sqlstate];
  const byClass: Record<string, number> = {
    "08": 503,
    "09": 500,
    "0L": 403,
    "0P": 403,
    "25": 500,
    "28": 403,
    "2D": 500,
    "38": 500,
    "39": 500,
    "3B": 500,
    "40": 500,
    "53": 503,
    "54": 500,
    "55": 500,
    "57": 500,
    "58": 500,
    F0: 500,
    HV: 500,
    P0: 500,
    XX: 500,
  };
  return byClass[sqlstate.slice(0, 2)] ?? 400;
}
