import { PostgrestClient } from "@supabase/postgrest-js";
import { retryUnavailable } from "./postgrest-retry";
import type { Rpc } from "./rpc";

/**
 * A PostgREST client for a Supabase project, authenticated with the service role.
 * postgrest-js directly rather than supabase-js: no realtime client (which needs a
 * WebSocket on Node 20) and a much smaller Lambda bundle. Its own retries are off:
 * postgrest-retry.ts retries within the function's time instead.
 */
export function supabaseRest(
  url: string,
  serviceRoleKey: string | (() => Promise<string>),
  fetchImpl: typeof fetch = fetch,
): PostgrestClient {
  const endpoint = `${url.replace(/\/+$/, "")}/rest/v1`;
  if (typeof serviceRoleKey === "string")
    return new PostgrestClient(endpoint, {
      headers: { apikey: serviceRoleKey, Authorization: `Bearer ${serviceRoleKey}` },
      fetch: retryUnavailable(fetchImpl),
      retry: false,
    });
  // A key read per request (from a cache), so a rotated key reaches a warm container.
  return new PostgrestClient(endpoint, {
    fetch: retryUnavailable(async (input, init) => {
      const key = await serviceRoleKey();
      const headers = new Headers(init?.headers);
      headers.set("apikey", key);
      headers.set("Authorization", `Bearer ${key}`);
      return fetchImpl(input, { ...init, headers });
    }),
    retry: false,
  });
}

/** Rows asked for in one request of a paged read: Supabase's default max_rows. */
export const PAGE_ROWS = 1000;

/** The PostgREST transport: POST /rest/v1/rpc/<fn> with the arguments as the JSON body. */
export function postgrestRpc(rest: PostgrestClient): Rpc {
  // PostgREST's error is thrown with the function named, instead of read as "no rows", and the
  // status it answered (a 503 is Supabase down for now: shared/errors.ts asAppError).
  const answer = <T>(
    fn: string,
    { data, error, status }: { data: T; error: { message: string } | null; status: number },
  ) => {
    if (error) throw Object.assign(new Error(`${fn} failed: ${error.message}`, { cause: error }), { status });
    return data;
  };
  return {
    call: async (fn, args) => answer(fn, await rest.rpc(fn, args)),
    async allRows(fn, args, orderBy) {
      const all: Record<string, unknown>[] = [];
      // By key, not offset: a row added or removed between pages neither repeats nor hides another.
      // Until a page comes back empty: a project's max_rows may be under PAGE_ROWS, so a short
      // page is not proof of the end.
      for (;;) {
        const last = all.at(-1)?.[orderBy];
        const query = rest.rpc(fn, args).order(orderBy).limit(PAGE_ROWS);
        const page = answer(fn, await (last === undefined ? query : query.gt(orderBy, last))) as Record<
          string,
          unknown
        >[];
        if (page.length === 0) return all;
        all.push(...page);
      }
    },
  };
}
