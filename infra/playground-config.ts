/**
 * What the playground page reads from its own `/config.json` before it renders, shared by the two
 * places that serve it: the local stack (infra/local/playground-server.ts) and the optional AWS
 * deployment (infra/aws/playground.ts). The page imports this type-only.
 */
export type PlaygroundConfig =
  /** The local stack: same origin, no sign-in, `x-user-id` names the user. */
  | { mode: "local" }
  /** Deployed: the API elsewhere, users signed in with the OIDC issuer (authorization code + PKCE). */
  | {
      mode: "oidc";
      /** the API's base URL (API Gateway's stage URL) */
      apiUrl: string;
      /** the OIDC issuer the API's authorizer trusts; its discovery document names the endpoints */
      issuer: string;
      /** the issuer's public client (no secret) the page signs in as */
      clientId: string;
      /** the audience the authorizer checks: the page sends whichever of its tokens carries it */
      audience: string;
      /** space-separated scopes asked for */
      scope: string;
    };

/**
 * The page's Content-Security-Policy: scripts and styles from its own origin only, so a build that
 * pulled anything from a CDN fails to load instead of quietly depending on the network. `connect`
 * adds where the page may send requests besides its own origin (the API, the issuer, S3 uploads).
 */
export function playgroundCsp(connect: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src ${["'self'", ...connect].join(" ")}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}
