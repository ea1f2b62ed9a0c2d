import type { ServerResponse } from "node:http";

/** A JSON answer from one of the local-only routes; a response already started is left alone. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
