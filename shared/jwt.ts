import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { API_KEY_USER_PREFIX, isApiKeyUser } from "./identity";
import { identifier } from "./text";

export interface JwtSettings {
  issuer: string;
  audience: string;
  /** where the issuer publishes its signing keys */
  jwksUrl?: string;
  /** how long a fetch of the keys may take (JWKS_TIMEOUT_MS unless given) */
  jwksTimeoutMs?: number;
}

/**
 * Under the authorizer function's 5 s timeout: an issuer slower than this is Unauthorized (401),
 * where a fetch that outlived the function would be API Gateway's 500 (jose's own default is 5 s).
 */
export const JWKS_TIMEOUT_MS = 3_000;

export class InvalidToken extends Error {}

/**
 * Verifies a bearer JWT against an OIDC issuer's published keys (jose): signature, issuer,
 * audience and expiry (which it must have). Only asymmetric algorithms are accepted, so neither `alg: none` nor a
 * token signed with the public key as an HMAC secret can pass. Returns the subject.
 */
export function jwtVerifier(settings: JwtSettings, keys?: JWTVerifyGetKey) {
  const jwks =
    keys ??
    createRemoteJWKSet(new URL(settings.jwksUrl ?? `${settings.issuer.replace(/\/+$/, "")}/.well-known/jwks.json`), {
      timeoutDuration: settings.jwksTimeoutMs ?? JWKS_TIMEOUT_MS,
    });
  return async (token: string): Promise<{ sub: string; claims: Record<string, unknown> }> => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"],
        clockTolerance: 5,
        // A token that never expires would outlive any revocation.
        requiredClaims: ["exp", "sub"],
      });
      return { sub: subjectOf(payload.sub), claims: payload as Record<string, unknown> };
    } catch (err) {
      if (err instanceof InvalidToken) throw err;
      throw new InvalidToken((err as Error).message);
    }
  };
}

const SUBJECT = identifier();

/**
 * The subject becomes the user id every store keys on, so it meets the rule any other user id
 * meets (storable text, 1 to 128 characters, exactly as sent: no trimming that would make two
 * subjects one) and is not an API key client's.
 */
function subjectOf(sub: unknown): string {
  const parsed = SUBJECT.safeParse(sub);
  if (!parsed.success || parsed.data !== sub)
    throw new InvalidToken(`the token's subject is not a user id: ${parsed.error?.issues[0]?.message ?? "padded"}`);
  if (isApiKeyUser(parsed.data)) throw new InvalidToken(`a subject starting with ${API_KEY_USER_PREFIX} is reserved`);
  return parsed.data;
}
