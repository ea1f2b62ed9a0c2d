import type { APIGatewayTokenAuthorizerEvent } from "aws-lambda";
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

type Key = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
import { createHmac } from "node:crypto";
import { createChatHandler } from "../../functions/chat";
import { createAuthorizer } from "../../functions/authorizer";
import { jwtVerifier } from "../../shared/jwt";

// Keys the test makes: an issuer's signing key, published as a JWKS, and a stranger's.
const ISSUER = "https://auth.example.com/";
const AUDIENCE = "agent-api";
let authorize: ReturnType<typeof createAuthorizer>;
let sign: (
  claims: Record<string, unknown>,
  options?: { key?: Key; exp?: string; iss?: string; aud?: string },
) => Promise<string>;
let publicJwk: JWK;

beforeAll(async () => {
  const issuerKeys = await generateKeyPair("RS256", { extractable: true });
  const stranger = await generateKeyPair("RS256");
  publicJwk = { ...(await exportJWK(issuerKeys.publicKey)), kid: "k1", alg: "RS256" };
  const jwks = createLocalJWKSet({ keys: [publicJwk] });
  authorize = createAuthorizer(jwtVerifier({ issuer: ISSUER, audience: AUDIENCE }, jwks));
  sign = (claims, o = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(o.iss ?? ISSUER)
      .setAudience(o.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(o.exp ?? "5m")
      .sign(o.key ?? issuerKeys.privateKey);
  void stranger;
  strangerKey = stranger.privateKey;
});
let strangerKey: Key;

const event = (token: string): APIGatewayTokenAuthorizerEvent => ({
  type: "TOKEN",
  authorizationToken: `Bearer ${token}`,
  methodArn: "arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/POST/api/chat",
});

describe("JWT authorizer", () => {
  it("allows a valid token for the whole API and passes its subject on", async () => {
    const result = await authorize(event(await sign({ sub: "user-42" })));
    expect(result.principalId).toBe("user-42");
    expect(result.context).toEqual({ userId: "user-42" });
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: "execute-api:Invoke",
        Effect: "Allow",
        Resource: "arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*/*",
      },
    ]);
  });

  const rejected = async (token: string) => expect(authorize(event(token))).rejects.toThrow("Unauthorized");

  it("rejects an expired token", async () => rejected(await sign({ sub: "u" }, { exp: "-1m" })));
  it("rejects the wrong audience", async () => rejected(await sign({ sub: "u" }, { aud: "someone-else" })));
  it("rejects the wrong issuer", async () => rejected(await sign({ sub: "u" }, { iss: "https://evil.example.com/" })));
  it("rejects a token signed by another key", async () => rejected(await sign({ sub: "u" }, { key: strangerKey })));
  it("rejects a token without a subject", async () => rejected(await sign({})));

  it("rejects alg none, and an HMAC token keyed with the public key", async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const claims = { sub: "u", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 };
    await rejected(`${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`);
    const unsigned = `${b64({ alg: "HS256", kid: "k1" })}.${b64(claims)}`;
    const forged = createHmac("sha256", JSON.stringify(publicJwk)).update(unsigned).digest("base64url");
    await rejected(`${unsigned}.${forged}`);
  });

  it("rejects a missing or malformed header", async () => {
    await expect(authorize({ ...event("x"), authorizationToken: "" })).rejects.toThrow("Unauthorized");
    await expect(authorize({ ...event("x"), authorizationToken: "Basic abc" })).rejects.toThrow("Unauthorized");
    await rejected("not.a.jwt");
  });
});

describe("handlers behind the authorizer", () => {
  it("use the authorizer's userId, and answer 403 when the body names someone else", async () => {
    const { chatEvent, context } = await import("../support/events");
    const seen: string[] = [];
    const handler = createChatHandler(
      (await import("../../shared/config")).loadConfig({ AUTH_MODE: "authorizer" }),
      async () =>
        ({
          chat: {
            reply: async (turn: { userId: string }) => (
              seen.push(turn.userId),
              { reply: "ok", sessionId: "s", messageId: "m", trace: [] }
            ),
          },
        }) as never,
    );
    const ok = await handler(
      chatEvent({ message: "hi" }, { authorizer: { userId: "user-42", principalId: "user-42" } }),
      context(),
    );
    expect(ok!.statusCode).toBe(200);
    expect(seen).toEqual(["user-42"]);
    const mismatch = await handler(
      chatEvent({ message: "hi", user_id: "user-7" }, { authorizer: { userId: "user-42" } }),
      context(),
    );
    expect(mismatch!.statusCode).toBe(403);
  });
});
