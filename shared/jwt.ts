import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";

export interface JwtSettings {
  issuer: string;
  audience: string;
  /** where the issuer publishes its signing keys */
  jwksUrl?: string;
}

export class InvalidToken extends Error {}

/**
 * Verifies a bearer JWT against an OIDC issuer's published keys (jose): signature, issuer,
 * audience and expiry. Only asymmetric algorithms are accepted, so neither `alg: none` nor a
 * token signed with the public key as an HMAC secret can pass. Returns the subject.
 */
export function jwtVerifier(settings: JwtSettings, keys?: JWTVerifyGetKey) {
  const jwks =
    keys ??
    createRemoteJWKSet(new URL(settings.jwksUrl ?? `${settings.issuer.replace(/\/+$/, "")}/.well-known/jwks.json`));
  return async (token: string): Promise<{ sub: string; claims: Record<string, unknown> }> => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"],
        clockTolerance: 5,
      });
      if (!payload.sub) throw new InvalidToken("the token has no subject");
      return { sub: payload.sub, claims: payload as Record<string, unknown> };
    } catch (err) {
      if (err instanceof InvalidToken) throw err;
      throw new InvalidToken((err as Error).message);
    }
  };
}
