/**
 * The token the API's authorizer accepts: it checks `aud` against the deployment's audience. An
 * access token that is a JWT for that audience (Auth0 or Okta, asked for the audience at sign-in)
 * is the right one; Cognito's access tokens carry no `aud`, and its ID token's `aud` is the app
 * client, which is the audience such a deployment names.
 */
export function bearerFor(audience: string, accessToken: string, idToken: string): string {
  const aud = jwtClaims(accessToken).aud;
  const audiences = Array.isArray(aud) ? aud : [aud];
  return audiences.includes(audience) ? accessToken : idToken;
}

/** A JWT's payload, unverified (the API verifies; the page only reads `aud` and `exp`); {} if not a JWT. */
export function jwtClaims(token: string): Record<string, unknown> {
  try {
    const payload = token.split(".")[1] ?? "";
    const claims: unknown = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    return claims !== null && typeof claims === "object" ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
