import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
  APIGatewayTokenAuthorizerEvent,
} from "aws-lambda";
import { apiKeyDirectory, type ApiKeyClient } from "../shared/api-keys";
import { loadConfig, required, type Config } from "../shared/config";
import { InvalidToken, jwtVerifier } from "../shared/jwt";
import { createLogger } from "../shared/logger";
import { secretValue } from "../shared/secrets";

const logger = createLogger("authorizer");

/** What the authorizer needs once the stack's API keys are on (`apiKeys` context). */
export interface ApiKeyAccess {
  /** the client an `ApiKey <value>` token belongs to; undefined for an unknown or disabled key */
  lookup: (value: string) => Promise<ApiKeyClient | undefined>;
  /** the key JWT users are metered under: with keys on, API Gateway wants one on every request */
  usersKey: () => Promise<string>;
}

/**
 * API Gateway TOKEN authorizer. `Authorization: Bearer <JWT>` from the configured OIDC issuer
 * hands the token's `sub` to the functions as `userId`. With API keys on, a server-to-server
 * client sends `Authorization: ApiKey <key>` instead; the functions get its name and whether the
 * key is trusted, and the key goes back to API Gateway, which meters it against the usage plan.
 * Allows the whole API for a valid credential (so API Gateway can cache the decision across
 * routes). Anything else is "Unauthorized", which API Gateway answers with 401.
 */
export function createAuthorizer(
  verify: (token: string) => Promise<{ sub: string; claims?: Record<string, unknown> }>,
  apiKeys?: ApiKeyAccess,
  admins?: AdminRule,
) {
  return async (
    event: APIGatewayTokenAuthorizerEvent | APIGatewayRequestAuthorizerEvent,
  ): Promise<APIGatewayAuthorizerResult> => {
    const [, scheme, credential] = /^(Bearer|ApiKey)\s+(\S+)$/i.exec(credentialOf(event)) ?? [];
    if (!scheme || !credential) throw new Error("Unauthorized");
    // arn:aws:execute-api:region:account:api-id/stage/METHOD/path -> every method and path of the stage
    const [arnPrefix, stage] = event.methodArn.split("/");
    const allow = (
      principalId: string,
      context: Record<string, string>,
      usageIdentifierKey?: string,
    ): APIGatewayAuthorizerResult => ({
      principalId,
      policyDocument: {
        Version: "2012-10-17",
        Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: `${arnPrefix}/${stage}/*/*` }],
      },
      context,
      ...(usageIdentifierKey ? { usageIdentifierKey } : {}),
    });

    if (scheme.toLowerCase() === "apikey") {
      const client = apiKeys && (await apiKeys.lookup(credential));
      if (!client) {
        logger.info("api key rejected", { reason: apiKeys ? "unknown or disabled key" : "API keys are off" });
        throw new Error("Unauthorized");
      }
      // A trusted key acts for its own users and runs the deployment's side: it administers the knowledge base.
      return allow(
        `client:${client.client}`,
        { client: client.client, trusted: String(client.trusted), ...(client.trusted ? { role: "admin" } : {}) },
        credential,
      );
    }

    let sub: string;
    let claims: Record<string, unknown> | undefined;
    try {
      ({ sub, claims } = await verify(credential));
    } catch (err) {
      if (err instanceof InvalidToken) {
        logger.info("token rejected", { reason: err.message });
        throw new Error("Unauthorized");
      }
      throw err;
    }
    const context: Record<string, string> = { userId: sub };
    if (admins && isAdmin(claims?.[admins.claim], admins.group)) context.role = "admin";
    return allow(sub, context, await apiKeys?.usersKey());
  };
}

/** Which JWT users are admins: those whose `claim` holds `group` (config ADMIN_CLAIM, ADMIN_GROUP). */
export interface AdminRule {
  claim: string;
  group: string;
}

/** A groups claim is a list (Cognito's cognito:groups) or a space- or comma-separated string (OAuth scopes, some IdPs). */
function isAdmin(value: unknown, group: string): boolean {
  if (Array.isArray(value)) return value.includes(group);
  return typeof value === "string" && value.split(/[\s,]+/).includes(group);
}

/**
 * The Authorization header's value: a TOKEN authorizer is handed it; a REQUEST authorizer (the
 * Agent Server API's routes) reads it, or else the API key in x-api-key, the header LangGraph's
 * SDK sends, as if it were `ApiKey <key>`.
 */
function credentialOf(event: APIGatewayTokenAuthorizerEvent | APIGatewayRequestAuthorizerEvent): string {
  if (event.type === "TOKEN") return event.authorizationToken ?? "";
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (headers.authorization) return headers.authorization;
  return headers["x-api-key"] ? `ApiKey ${headers["x-api-key"]}` : "";
}

/**
 * The JWT check the settings ask for. A deployment without an OIDC issuer (a demo reached with API
 * keys) refuses every bearer token as Unauthorized (401), never an error (500).
 */
export function configuredVerifier(
  config: Config,
): (token: string) => Promise<{ sub: string; claims?: Record<string, unknown> }> {
  if (!config.OIDC_ISSUER) {
    return async () => {
      throw new InvalidToken("no OIDC issuer is configured: this deployment accepts API keys only");
    };
  }
  let verifier: ReturnType<typeof jwtVerifier> | undefined;
  return (token) => {
    verifier ??= jwtVerifier({
      issuer: required(config, "OIDC_ISSUER"),
      audience: required(config, "OIDC_AUDIENCE"),
      jwksUrl: config.OIDC_JWKS_URL,
    });
    return verifier(token);
  };
}

const config = loadConfig();

export const handler = createAuthorizer(
  configuredVerifier(config),
  config.USERS_API_KEY_SECRET_ARN
    ? {
        lookup: apiKeyDirectory({ stack: config.API_KEY_STACK }),
        usersKey: () => secretValue("USERS_API_KEY", undefined, config.USERS_API_KEY_SECRET_ARN),
      }
    : undefined,
  config.ADMIN_CLAIM && config.ADMIN_GROUP ? { claim: config.ADMIN_CLAIM, group: config.ADMIN_GROUP } : undefined,
);
export { loadDeferred } from "../shared/deferred";
