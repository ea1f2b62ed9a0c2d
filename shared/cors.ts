/**
 * CORS for browser clients of the API (the deployed playground, Agent Chat UI, useStream in a web
 * app). CORS_ORIGINS lists the origins allowed, comma-separated; "*" allows any; "loopback" (the
 * local stack's default) allows pages served from this machine; empty (the default in AWS without
 * `corsOrigins` or the playground) allows none, and the responses carry no CORS headers.
 */
// x-auth-scheme: Agent Chat UI and LangGraph's SDK send it with their API key.
export const CORS_ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "x-api-key",
  "x-auth-scheme",
  "x-user-id",
  "last-event-id",
];
export const CORS_ALLOW_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export function parseOrigins(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o.length > 0);
}

/**
 * Any page served from this machine (localhost, 127.0.0.1 or [::1], any port): the local stack's
 * default. Locally the caller names the user, so a stack open to every origin would let any web
 * page its developer visits read and erase every local user's data; its own playground and Agent
 * Chat UI on another port still reach it. Not a deployment's setting (infra/aws/settings.ts takes
 * origins only).
 */
export const LOOPBACK = "loopback";
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function isLoopback(origin: string): boolean {
  try {
    const url = new URL(origin);
    // Exactly an origin as a browser sends it: no path, user or other spelling of the host.
    return url.origin === origin && /^https?:$/.test(url.protocol) && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Whether a Host header names this machine (localhost, 127.0.0.1 or [::1], any port). Under
 * LOOPBACK the local stack answers no other: a page on a name an attacker resolves to 127.0.0.1
 * (DNS rebinding) calls the stack as its own origin, which CORS never sees.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  try {
    const url = new URL(`http://${host}`);
    return url.host === host.toLowerCase() && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

const allows = (allowed: readonly string[], origin: string) =>
  allowed.includes(origin) || (allowed.includes(LOOPBACK) && isLoopback(origin));

/** The headers a response to `origin` carries: none unless the origin is allowed. */
export function corsHeaders(allowed: readonly string[], origin: string | undefined): Record<string, string> {
  const allowAll = allowed.includes("*");
  if (!allowAll && (origin === undefined || !allows(allowed, origin))) return {};
  return {
    "access-control-allow-origin": allowAll ? "*" : origin!,
    // The SDK reads the run's id from Content-Location (onRunCreated), and a search's page from
    // X-Pagination-Total and X-Pagination-Next.
    "access-control-expose-headers": "content-location,location,x-pagination-total,x-pagination-next",
    ...(allowAll ? {} : { vary: "origin" }),
  };
}

/** The headers a response to this request carries: its Origin header looked up in any case. */
export function corsHeadersFor(
  allowed: readonly string[],
  headers: Record<string, string | undefined> | null | undefined,
): Record<string, string> {
  if (allowed.length === 0) return {};
  const origin = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === "origin")?.[1];
  return corsHeaders(allowed, origin);
}

/** What a preflight (OPTIONS) is answered with, as API Gateway's CORS preflight answers it. */
export function preflightHeaders(allowed: readonly string[], origin: string | undefined): Record<string, string> {
  const base = corsHeaders(allowed, origin);
  if (!base["access-control-allow-origin"]) return {};
  return {
    ...base,
    "access-control-allow-methods": CORS_ALLOW_METHODS.join(","),
    "access-control-allow-headers": CORS_ALLOW_HEADERS.join(","),
    "access-control-max-age": "600",
  };
}
