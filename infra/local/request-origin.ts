import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage } from "node:http";

/** A host and its port, nothing else: a DNS name, an IPv4 address or a bracketed IPv6 one. */
const HOST_PORT =
  /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*):(\d{1,5})$/i;

const current = new AsyncLocalStorage<string>();

/**
 * Runs `serve` knowing the origin the request came in on, so the URLs the stack hands back while
 * answering it (presigned-style uploads and downloads) are the page's own origin: a playground
 * opened on 127.0.0.1 must not be sent to localhost, which its CSP (connect-src 'self') refuses.
 * A Host header that is not host:port is not used.
 */
export function withRequestOrigin<T>(req: IncomingMessage, serve: () => T): T {
  const origin = originOf(req.headers.host);
  return origin ? current.run(origin, serve) : serve();
}

/** The origin of the request being answered, else `configured` (the stack's own URL). */
export const requestOrigin = (configured: string): string => current.getStore() ?? configured;

function originOf(host: string | undefined): string | undefined {
  const port = host === undefined ? undefined : HOST_PORT.exec(host)?.[1];
  if (port === undefined || Number(port) < 1 || Number(port) > 65_535) return undefined;
  const origin = `http://${host}`;
  return URL.canParse(origin) ? origin : undefined;
}
