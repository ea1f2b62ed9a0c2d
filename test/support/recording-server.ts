import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../infra/local/close-server";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** An answer, or `hang`: the request is read and never answered (a service that stopped mid-request). */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string>; hang?: boolean };

/**
 * A local HTTP server standing in for a service (PostgREST, Intercom): it records each request and
 * answers with what the test scripts, in that service's documented response format.
 */
export async function recordingServer(respond: (req: RecordedRequest) => Reply) {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://localhost");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
    };
    requests.push(recorded);
    const reply = respond(recorded);
    if (reply.hang) return;
    res.writeHead(reply.status, { "content-type": "application/json; charset=utf-8", ...reply.headers });
    res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => closeServer(server),
  };
}
