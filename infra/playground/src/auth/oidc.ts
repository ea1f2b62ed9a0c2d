import * as oauth from "oauth4webapi";
import type { PlaygroundConfig } from "../../../playground-config";
import { bearerFor, jwtClaims } from "./bearer";

export type OidcConfig = Extract<PlaygroundConfig, { mode: "oidc" }>;

/** A signed-in user: the bearer token the API is called with, and who it names. */
export interface SignedIn {
  token: string;
  sub: string;
  /** what the top bar shows: the ID token's email or name, else its subject */
  name: string;
  /** ms since the epoch: the token's own `exp` */
  expiresAt: number;
}

// sessionStorage: a token lives as long as the tab, and no other site's script can reach it.
const SIGNED_IN = "playground.oidc.signed-in";
const PENDING = "playground.oidc.pending";

/**
 * Authorization code with PKCE, by oauth4webapi (discovery, PKCE, state and the ID token's claims
 * are checked there, not here). The page is a public client: no secret, so the code is only worth
 * something with the verifier this tab kept.
 */
export async function signIn(config: OidcConfig): Promise<never> {
  const as = await authorizationServer(config);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo: window.location.search }));
  const url = new URL(as.authorization_endpoint ?? "");
  url.search = new URLSearchParams({
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    response_type: "code",
    scope: config.scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    // Auth0 and Okta issue a JWT access token for an API only when asked for its audience; with
    // Cognito the client is the audience, and nothing is added.
    ...(config.audience !== config.clientId ? { audience: config.audience } : {}),
  }).toString();
  window.location.assign(url.href);
  return new Promise<never>(() => {}); // the page is leaving
}

/**
 * The user this tab signed in as: from the issuer's redirect back (`?code=…&state=…`, exchanged for
 * tokens once, then taken off the address bar), else from earlier in the tab while the token is
 * good for another minute. Undefined means "not signed in".
 */
export async function signedIn(config: OidcConfig): Promise<SignedIn | undefined> {
  const here = new URL(window.location.href);
  const pending = sessionStorage.getItem(PENDING);
  if (pending && (here.searchParams.has("code") || here.searchParams.has("error"))) {
    sessionStorage.removeItem(PENDING);
    const { verifier, state, returnTo } = JSON.parse(pending) as {
      verifier: string;
      state: string;
      returnTo: string;
    };
    window.history.replaceState(null, "", `${here.pathname}${returnTo}`);
    const user = await exchange(config, here, verifier, state);
    sessionStorage.setItem(SIGNED_IN, JSON.stringify(user));
    return user;
  }
  const kept = sessionStorage.getItem(SIGNED_IN);
  const user = kept ? (JSON.parse(kept) as SignedIn) : undefined;
  return user && user.expiresAt > Date.now() + 60_000 ? user : undefined;
}

/** Forgets the tokens. The issuer's own session stays: signing in again may not ask for a password. */
export function signOut(): void {
  sessionStorage.removeItem(SIGNED_IN);
}

/** A failed sign-in, as the issuer put it (`access_denied: the user declined`) when it said anything. */
export function signInProblem(err: unknown): string {
  const e = err as { error?: unknown; error_description?: unknown; message?: unknown };
  if (typeof e?.error === "string")
    return typeof e.error_description === "string" ? `${e.error}: ${e.error_description}` : e.error;
  return err instanceof Error ? err.message : String(err);
}

export function isExpired(user: SignedIn): boolean {
  return user.expiresAt <= Date.now();
}

/** Where the issuer sends the browser back: the page's root, the one URL to register with the issuer. */
export function redirectUri(): string {
  return new URL("/", window.location.origin).href;
}

async function exchange(config: OidcConfig, callback: URL, verifier: string, state: string): Promise<SignedIn> {
  const as = await authorizationServer(config);
  const client: oauth.Client = { client_id: config.clientId };
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri(),
    verifier,
    insecure(config),
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  const token = bearerFor(config.audience, tokens.access_token, tokens.id_token!);
  const name = [claims.email, claims.name, claims.preferred_username].find((v) => typeof v === "string");
  return {
    token,
    sub: claims.sub,
    name: (name as string | undefined) ?? claims.sub,
    expiresAt: Number(jwtClaims(token).exp ?? claims.exp) * 1000,
  };
}

async function authorizationServer(config: OidcConfig): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(config.issuer);
  const response = await oauth.discoveryRequest(issuer, {
    algorithm: "oidc",
    ...insecure(config),
  });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** oauth4webapi refuses plain http; an issuer on this machine (the browser tests' stand-in) is the exception. */
function insecure(config: OidcConfig): {
  [oauth.allowInsecureRequests]?: boolean;
} {
  const { protocol, hostname } = new URL(config.issuer);
  return protocol === "http:" && (hostname === "127.0.0.1" || hostname === "localhost")
    ? { [oauth.allowInsecureRequests]: true }
    : {};
}
