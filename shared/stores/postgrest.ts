import { PostgrestClient } from "@supabase/postgrest-js";

/**
 * A PostgREST client for a Supabase project, authenticated with the service role.
 * postgrest-js directly rather than supabase-js: no realtime client (which needs a
 * WebSocket on Node 20) and a much smaller Lambda bundle.
 */
export function supabaseRest(url: string, serviceRoleKey: string, fetchImpl?: typeof fetch): PostgrestClient {
  return new PostgrestClient(`${url.replace(/\/+$/, "")}/rest/v1`, {
    headers: { apikey: serviceRoleKey, Authorization: `Bearer ${serviceRoleKey}` },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

/** Throws PostgREST's error with the operation named, instead of treating it as "no rows". */
export function unwrap<T>(operation: string, result: { data: T | null; error: { message: string } | null }): T {
  if (result.error) throw new Error(`${operation} failed: ${result.error.message}`, { cause: result.error });
  return result.data as T;
}
