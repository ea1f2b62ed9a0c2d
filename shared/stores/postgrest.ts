import { PostgrestClient } from "@supabase/postgrest-js";

/**
 * A PostgREST client for a Supabase project, authenticated with the service role.
 * postgrest-js directly rather than supabase-js: no realtime client (which needs a
 * WebSocket on Node 20) and a much smaller Lambda bundle.
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
      fetch: fetchImpl,
    });
  // A key read per request (from a cache), so a rotated key reaches a warm container.
  return new PostgrestClient(endpoint, {
    fetch: async (input, init) => {
      const key = await serviceRoleKey();
      const headers = new Headers(init?.headers);
      headers.set("apikey", key);
      headers.set("Authorization", `Bearer ${key}`);
      return fetchImpl(input, { ...init, headers });
    },
  });
}

/** Throws PostgREST's error with the operation named, instead of treating it as "no rows". */
export function unwrap<T>(operation: string, result: { data: T | null; error: { message: string } | null }): T {
  if (result.error) throw new Error(`${operation} failed: ${result.error.message}`, { cause: result.error });
  return result.data as T;
}

/** Calls one of the migrations' SQL functions by name; its error is thrown with the function named. */
export async function rpc<T>(rest: PostgrestClient, fn: string, args: Record<string, unknown>): Promise<T> {
  return unwrap<T>(fn, await rest.rpc(fn, args));
}
