import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { preflightHeaders } from "../../shared/cors";
import { jwtVerifier } from "../../shared/jwt";
import { closeServer } from "../../infra/local/close-server";

/**
 * API Gateway as a deployment with the playground has it, in front of the local stack: a browser
 * origin allowed by CORS, and every call's bearer token checked by the authorizer's own JWT check
 * (shared/jwt.ts) before it is passed on as that token's user. The local stack itself has no
 * authorizer (x-user-id names the user), so this is the piece that makes the signed-in page's
 * calls stand or fall by its token.
 */
export async function startJwtGateway(options: {
  target: string;
  issuer: string;
  audience: string;
  allowOrigin: () => string;
}): Promise<{ url: string; calls: Array<{ path: string; sub?: string }>; close(): Promise<void> }> {
  const verify = jwtVerifier({ issuer: options.issuer, audience: options.audience });
  const calls: Array<{ path: string; sub?: string }> = [];
  const server = createServer((req, res) => {
    void (async () => {
      const origin = req.headers.origin;
      const cors = preflightHeaders([options.allowOrigin()], origin);
      if (req.method === "OPTIONS") return res.writeHead(204, cors).end();
      const corsOnly = { "access-control-allow-origin": cors["access-control-allow-origin"] ?? "" };
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      let sub: string | undefined;
      try {
        sub = bearer ? (await verify(bearer)).sub : undefined;
      } catch {
        sub = undefined;
      }
      calls.push({ path: req.url ?? "", sub });
      if (!sub) {
        res.writeHead(401, { "content-type": "application/json", ...corsOnly });
        return res.end(JSON.stringify({ error: { code: "UNAUTHORIZED", message: "Unauthorized" } }));
      }
      const { authorization: _token, host: _host, ...headers } = req.headers;
      const upstream = request(`${options.target}${req.url}`, {
        method: req.method,
        headers: { ...headers, "x-user-id": sub },
      });
      upstream.on("response", (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.writeHead(502, corsOnly).end());
      req.pipe(upstream);
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, close: () => closeServer(server) };
}
