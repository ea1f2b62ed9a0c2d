import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../infra/local/close-server";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

/**
 * An OIDC provider for the browser tests, doing what Cognito's hosted UI does for a public client:
 * discovery, `/authorize` for the authorization code flow (the user is signed in at once, as if
 * they had typed their password), `/token` checking PKCE (S256) and the redirect URI, and the
 * signing keys. A real issuer cannot be reached from here; this one holds the page to the
 * protocol, so a page that skipped PKCE or sent the wrong redirect URI fails its token exchange.
 */
export interface TestIssuer {
  url: string;
  /** each token exchange, with whether its code_verifier matched the code's challenge */
  exchanges: Array<{ pkce: boolean; clientId: string }>;
  /** the next /authorize answers this OAuth error instead of a code (e.g. access_denied) */
  refuseNext?: string;
  /** the next /authorize sends back another `state` than the page's, as a forged callback would */
  forgeNextState?: boolean;
  /** how long the next tokens last (jose's notation, e.g. "3s"); default an hour */
  nextLifetime?: string;
  close(): Promise<void>;
}

export async function startTestIssuer(options: {
  clientId: string;
  redirectUri: () => string;
  user: { sub: string; email: string };
}): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();
  const issuer: TestIssuer = { url: "", exchanges: [], close: () => closeServer(server) };

  const sign = (claims: Record<string, unknown>, lifetime: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "test-key" })
      .setIssuer(issuer.url)
      .setSubject(options.user.sub)
      .setIssuedAt()
      .setExpirationTime(lifetime)
      .sign(privateKey);

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: Error) =>
      json(res, 500, { error: "server_error", error_description: err.message }),
    );
  });
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", issuer.url);
    // The page calls discovery and the token endpoint from its own origin, as Cognito allows.
    res.setHeader("access-control-allow-origin", "*");
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-headers": "content-type",
        "access-control-allow-methods": "GET,POST",
      });
      return res.end();
    }
    if (url.pathname === "/.well-known/openid-configuration")
      return json(res, 200, {
        issuer: issuer.url,
        authorization_endpoint: `${issuer.url}/authorize`,
        token_endpoint: `${issuer.url}/token`,
        jwks_uri: `${issuer.url}/.well-known/jwks.json`,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    if (url.pathname === "/.well-known/jwks.json") return json(res, 200, { keys: [jwk] });
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      const back = new URL(q.get("redirect_uri") ?? "");
      if (q.get("client_id") !== options.clientId || back.href !== options.redirectUri())
        return json(res, 400, { error: "invalid_request", error_description: "unknown client or redirect URI" });
      back.searchParams.set("state", issuer.forgeNextState ? "forged-state" : (q.get("state") ?? ""));
      issuer.forgeNextState = undefined;
      if (issuer.refuseNext) {
        back.searchParams.set("error", issuer.refuseNext);
        back.searchParams.set("error_description", "the user declined");
        issuer.refuseNext = undefined;
      } else if (q.get("response_type") !== "code" || q.get("code_challenge_method") !== "S256") {
        back.searchParams.set("error", "invalid_request");
      } else {
        const code = randomUUID();
        codes.set(code, {
          challenge: q.get("code_challenge") ?? "",
          redirectUri: back.href.split("?")[0]!,
          clientId: options.clientId,
        });
        back.searchParams.set("code", code);
      }
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (url.pathname === "/token" && req.method === "POST") {
      const form = new URLSearchParams(await text(req));
      const code = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? ""); // one use
      const verifier = form.get("code_verifier") ?? "";
      const pkce = !!code && createHash("sha256").update(verifier).digest("base64url") === code.challenge;
      issuer.exchanges.push({ pkce, clientId: form.get("client_id") ?? "" });
      if (
        !code ||
        !pkce ||
        form.get("grant_type") !== "authorization_code" ||
        form.get("redirect_uri") !== code.redirectUri
      )
        return json(res, 400, { error: "invalid_grant" });
      const lifetime = issuer.nextLifetime ?? "1h";
      issuer.nextLifetime = undefined;
      return json(res, 200, {
        token_type: "Bearer",
        expires_in: 3600,
        // Like Cognito's: an access token without `aud`, so the ID token is the one the API accepts.
        access_token: await sign(
          { client_id: options.clientId, token_use: "access", scope: form.get("scope") ?? "openid" },
          lifetime,
        ),
        id_token: await sign({ aud: options.clientId, email: options.user.email, token_use: "id" }, lifetime),
      });
    }
    json(res, 404, { error: "not_found" });
  }
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  issuer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return issuer;
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}
