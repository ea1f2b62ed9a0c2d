import type { APIGatewayRequestAuthorizerEvent, APIGatewayTokenAuthorizerEvent } from "aws-lambda";
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

type Key = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
import { createHmac } from "node:crypto";
import { createChatHandler } from "../../functions/chat";
import { configuredVerifier, createAuthorizer } from "../../functions/authorizer";
import { loadConfig } from "../../shared/config";
import { jwtVerifier } from "../../shared/jwt";

// Keys the test makes: an issuer's signing key, published as a JWKS, and a stranger's.
const ISSUER = "https://auth.example.com/";
const AUDIENCE = "agent-api";
let authorize: ReturnType<typeof createAuthorizer>;
let sign: (
  claims: Record<string, unknown>,
  options?: { key?: Key; exp?: string | null; iss?: string; aud?: string },
) => Promise<string>;
let publicJwk: JWK;

beforeAll(async () => {
  const issuerKeys = await generateKeyPair("RS256", { extractable: true });
  const stranger = await generateKeyPair("RS256");
  publicJwk = { ...(await exportJWK(issuerKeys.publicKey)), kid: "k1", alg: "RS256" };
  const jwks = createLocalJWKSet({ keys: [publicJwk] });
  authorize = createAuthorizer(jwtVerifier({ issuer: ISSUER, audience: AUDIENCE }, jwks));
  sign = (claims, o = {}) => {
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(o.iss ?? ISSUER)
      .setAudience(o.aud ?? AUDIENCE)
      .setIssuedAt();
    if (o.exp !== null) jwt.setExpirationTime(o.exp ?? "5m");
    return jwt.sign(o.key ?? issuerKeys.privateKey);
  };
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
  it("answers Unauthorized, not an error, to a bearer token when no OIDC issuer is configured (API keys only)", async () => {
    const keysOnly = createAuthorizer(configuredVerifier(loadConfig({})));
    await expect(keysOnly(event(await sign({ sub: "user-42" })))).rejects.toThrow(/^Unauthorized$/);
  });

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
  it("rejects a token that never expires", async () => rejected(await sign({ sub: "u" }, { exp: null })));

  it("rejects a subject no user id may be: not text, empty, ill-formed, NUL, too long", async () => {
    for (const sub of [42, true, ["u"], { id: "u" }, "", "   ", "eve\ud800", "a\u0000b", "x".repeat(129)])
      await rejected(await sign({ sub }));
    expect((await authorize(event(await sign({ sub: "x".repeat(128) })))).principalId).toHaveLength(128);
  });

  it("rejects a subject in the API key clients' names (client:…), so no JWT user is a key's client", async () => {
    await rejected(await sign({ sub: "client:reports" }));
    await rejected(await sign({ sub: "CLIENT:reports" }));
  });

  it("rejects alg none, and an HMAC token keyed with the public key", async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const claims = { sub: "u", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 };
    await rejected(`${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`);
    const unsigned = `${b64({ alg: "HS256", kid: "k1" })}.${b64(claims)}`;
    const forged = createHmac("sha256", JSON.stringify(publicJwk)).update(unsigned).digest("base64url");
    await rejected(`${unsigned}.${forged}`);
  });

  // The authorizer function has 5 s; a JWKS fetch that outlived it would be API Gateway's 500.
  it("answers Unauthorized within its JWKS time limit when the issuer never answers", async () => {
    const { createServer } = await import("node:http");
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const { port } = silent.address() as { port: number };
    try {
      const verify = jwtVerifier({
        issuer: ISSUER,
        audience: AUDIENCE,
        jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
        jwksTimeoutMs: 200,
      });
      const outcome = await Promise.race([
        createAuthorizer(verify)(event(await sign({ sub: "u" }))).catch((err: Error) => err.message),
        new Promise((r) => setTimeout(() => r("still waiting"), 2_000)),
      ]);
      expect(outcome).toBe("Unauthorized");
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("rejects a missing or malformed header", async () => {
    await expect(authorize({ ...event("x"), authorizationToken: "" })).rejects.toThrow("Unauthorized");
    await expect(authorize({ ...event("x"), authorizationToken: "Basic abc" })).rejects.toThrow("Unauthorized");
    await rejected("not.a.jwt");
  });
});

describe("API key clients", () => {
  const KEYS: Record<string, { client: string; trusted: boolean }> = {
    "key-billing": { client: "billing", trusted: true },
    "key-reports": { client: "reports", trusted: false },
  };
  const withKeys = () =>
    createAuthorizer(jwtVerifier({ issuer: ISSUER, audience: AUDIENCE }, createLocalJWKSet({ keys: [publicJwk] })), {
      lookup: async (value) => KEYS[value],
      usersKey: async () => "key-users",
    });
  const apiKeyEvent = (key: string) => ({ ...event("x"), authorizationToken: `ApiKey ${key}` });

  it("allows a known key, naming its client and trust, and hands the key to API Gateway for its usage plan", async () => {
    const result = await withKeys()(apiKeyEvent("key-billing"));
    expect(result).toMatchObject({
      principalId: "client:billing",
      context: { client: "billing", trusted: "true" },
      usageIdentifierKey: "key-billing",
    });
    expect((await withKeys()(apiKeyEvent("key-reports"))).context).toEqual({ client: "reports", trusted: "false" });
  });

  it("meters JWT users under the users' key once keys are on", async () => {
    const result = await withKeys()(event(await sign({ sub: "user-42" })));
    expect(result).toMatchObject({ principalId: "user-42", usageIdentifierKey: "key-users" });
  });

  it("rejects an unknown key, and any key while keys are off", async () => {
    await expect(withKeys()(apiKeyEvent("key-stolen"))).rejects.toThrow("Unauthorized");
    await expect(authorize(apiKeyEvent("key-billing"))).rejects.toThrow("Unauthorized");
    expect((await authorize(event(await sign({ sub: "u" })))).usageIdentifierKey).toBeUndefined();
  });

  it("as a REQUEST authorizer (the Agent Server API's routes), reads Authorization or else x-api-key", async () => {
    const requestEvent = (headers: Record<string, string>) =>
      ({
        type: "REQUEST",
        methodArn: "arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/POST/threads",
        headers,
      }) as unknown as APIGatewayRequestAuthorizerEvent;
    expect(await withKeys()(requestEvent({ "X-Api-Key": "key-reports" }))).toMatchObject({
      principalId: "client:reports",
      usageIdentifierKey: "key-reports",
    });
    expect(await withKeys()(requestEvent({ Authorization: `Bearer ${await sign({ sub: "user-9" })}` }))).toMatchObject({
      principalId: "user-9",
    });
    await expect(withKeys()(requestEvent({ "x-api-key": "key-stolen" }))).rejects.toThrow("Unauthorized");
    await expect(withKeys()(requestEvent({}))).rejects.toThrow("Unauthorized");
    await expect(authorize(requestEvent({ "x-api-key": "key-billing" }))).rejects.toThrow("Unauthorized");
  });
});

/** One chat request through the handler, with the given authorizer context: its status, error code and user. */
const chatAs = (body: Record<string, unknown>, authorizer: Record<string, unknown>) =>
  chatAsWithHeader(body, authorizer);

async function chatAsWithHeader(
  body: Record<string, unknown>,
  authorizer: Record<string, unknown>,
  userHeader?: string,
) {
  const { chatEvent, context } = await import("../support/events");
  const seen: string[] = [];
  const handler = createChatHandler(
    (await import("../../shared/config")).loadConfig({ AUTH_MODE: "authorizer" }),
    async () =>
      ({
        chat: {
          reply: async (turn: { userId: string }) => {
            seen.push(turn.userId);
            return { reply: "ok", sessionId: "s", messageId: "m", trace: [] };
          },
        },
      }) as never,
  );
  const headers: Record<string, string> = userHeader === undefined ? {} : { "x-user-id": userHeader };
  const res = (await handler(chatEvent({ message: "hi", ...body }, { authorizer, headers }), context()))!;
  return { status: res.statusCode, code: JSON.parse(res.body).error?.code, user: seen[0] };
}

describe("handlers behind the authorizer", () => {
  it("use the authorizer's userId, and answer 403 when the body names someone else", async () => {
    const jwtUser = { userId: "user-42", principalId: "user-42" };
    expect(await chatAs({}, jwtUser)).toEqual({ status: 200, code: undefined, user: "user-42" });
    expect(await chatAs({ user_id: "user-7" }, jwtUser)).toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("handlers behind an API key", () => {
  const trusted = { principalId: "client:billing", client: "billing", trusted: "true" };
  const untrusted = { principalId: "client:reports", client: "reports", trusted: "false" };

  it("take the user from the body only when the key is trusted", async () => {
    expect(await chatAs({ user_id: "customer-9" }, trusted)).toEqual({
      status: 200,
      code: undefined,
      user: "customer-9",
    });
    expect(await chatAs({}, trusted)).toMatchObject({ status: 400, code: "user_id_required" });
  });

  it("refuse a trusted key's request whose body and x-user-id name different users", async () => {
    const both = (header: string) => chatAsWithHeader({ user_id: "customer-9" }, trusted, header);
    expect(await both("customer-9")).toEqual({ status: 200, code: undefined, user: "customer-9" });
    expect(await both("customer-7")).toMatchObject({ status: 400, code: "user_id_conflict" });
  });

  it("refuse a trusted key naming an API key client (client:…) as its user", async () => {
    expect(await chatAs({ user_id: "client:reports" }, trusted)).toMatchObject({
      status: 400,
      code: "invalid_user_id",
    });
  });

  it("make an untrusted client its own user, refusing a body user_id with 403", async () => {
    expect(await chatAs({}, untrusted)).toEqual({ status: 200, code: undefined, user: "client:reports" });
    expect(await chatAs({ user_id: "customer-9" }, untrusted)).toMatchObject({ status: 403, code: "forbidden" });
  });
});

describe("the admin role", () => {
  const admins = { claim: "cognito:groups", group: "kb-admins" };
  const withAdmins = () =>
    createAuthorizer(
      jwtVerifier({ issuer: ISSUER, audience: AUDIENCE }, createLocalJWKSet({ keys: [publicJwk] })),
      {
        lookup: async (value) =>
          value === "trusted-key"
            ? { client: "backend", trusted: true }
            : value === "plain-key"
              ? { client: "bot", trusted: false }
              : undefined,
        usersKey: async () => "users-key",
      },
      admins,
    );

  it("comes from the configured claim holding the configured group, as a list or a separated string", async () => {
    const authorize = withAdmins();
    expect(
      (await authorize(event(await sign({ sub: "a", "cognito:groups": ["staff", "kb-admins"] })))).context,
    ).toEqual({
      userId: "a",
      role: "admin",
    });
    expect((await authorize(event(await sign({ sub: "b", "cognito:groups": "staff kb-admins" })))).context?.role).toBe(
      "admin",
    );
    for (const groups of [["staff"], "kb-admins-not", undefined, 42]) {
      const result = await authorize(event(await sign({ sub: "c", "cognito:groups": groups })));
      expect(result.context).toEqual({ userId: "c" });
    }
  });

  it("comes with a trusted API key, never with a plain one", async () => {
    const authorize = withAdmins();
    const key = (value: string): APIGatewayTokenAuthorizerEvent => ({
      ...event(""),
      authorizationToken: `ApiKey ${value}`,
    });
    expect((await authorize(key("trusted-key"))).context).toMatchObject({ client: "backend", role: "admin" });
    expect((await authorize(key("plain-key"))).context).not.toHaveProperty("role");
  });

  it("lets a trusted key administer the knowledge base without naming a user", async () => {
    const { createKnowledgeHandler } = await import("../../functions/knowledge");
    const { apiEvent, context } = await import("../support/events");
    // No knowledge base behind it: past the caller's checks, the route's own 503.
    const handler = createKnowledgeHandler(() => ({ config: loadConfig({ AUTH_MODE: "authorizer" }) }) as never);
    const list = (authorizer: Record<string, unknown>) =>
      handler(
        apiEvent({ method: "GET", resource: "/api/knowledge/documents", path: "/api/knowledge/documents", authorizer }),
        context(),
      );
    const key = { principalId: "client:backend", client: "backend", trusted: "true", role: "admin" };
    expect(JSON.parse((await list(key)).body).error.code).toBe("knowledge_unavailable");
    const plainKey = { principalId: "client:bot", client: "bot", trusted: "false" };
    expect((await list(plainKey)).statusCode).toBe(403);
  });

  it("is read from the authorizer in AWS, where an x-user-role header counts for nothing", async () => {
    const { isAdminCaller } = await import("../../shared/identity");
    const headerOnly = { headers: { "x-user-role": "admin" }, requestContext: { authorizer: { userId: "u" } } };
    expect(isAdminCaller(headerOnly as never, "authorizer")).toBe(false);
    expect(
      isAdminCaller(
        { headers: {}, requestContext: { authorizer: { userId: "u", role: "admin" } } } as never,
        "authorizer",
      ),
    ).toBe(true);
    expect(isAdminCaller(headerOnly as never, "local")).toBe(true);
    expect(isAdminCaller({ headers: { "X-User-Role": "user" } } as never, "local")).toBe(false);
  });
});
