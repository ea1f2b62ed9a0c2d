import type { PlaygroundConfig } from "../../../playground-config";
import { isExpired, type OidcConfig, type SignedIn, signIn, signInProblem, signedIn } from "./oidc";

/** How the page reaches the API: where, and as whom. */
export type Connection =
  /** the local stack: same origin, and `x-user-id` names the user (any name: the user switch) */
  | { mode: "local"; apiUrl: string }
  /** a deployment: the API's URL and the signed-in user's bearer token */
  | { mode: "oidc"; apiUrl: string; config: OidcConfig; user: SignedIn }
  /** a deployment nobody in this tab has signed in to yet, or whose sign-in just failed */
  | { mode: "signed-out"; config: OidcConfig; error?: string };

let current: Connection | undefined;

/** Reads the page's /config.json, and for a deployment the user this tab signed in as. */
export async function connect(): Promise<Connection> {
  const response = await fetch("/config.json", { cache: "no-cache" });
  if (!response.ok) throw new Error(`the playground's /config.json answered ${response.status}`);
  const config = (await response.json()) as PlaygroundConfig;
  if (config.mode === "local") current = { mode: "local", apiUrl: window.location.origin };
  else {
    try {
      const user = await signedIn(config);
      current = user
        ? {
            mode: "oidc",
            apiUrl: config.apiUrl.replace(/\/+$/, ""),
            config,
            user,
          }
        : { mode: "signed-out", config };
    } catch (err) {
      // The issuer's refusal (?error=access_denied), a replayed code, a token for another client.
      current = {
        mode: "signed-out",
        config,
        error: signInProblem(err),
      };
    }
  }
  return current;
}

export function connection(): Connection & { mode: "local" | "oidc" } {
  if (current?.mode !== "local" && current?.mode !== "oidc") throw new Error("the page is not connected");
  return current;
}

/** The headers that say who is calling: locally the chosen user, deployed the bearer token. */
export function identityHeaders(user: string): Record<string, string> {
  const c = connection();
  return c.mode === "local" ? { "x-user-id": user } : { authorization: `Bearer ${c.user.token}` };
}

/**
 * Before every call (ours and the SDK's): a deployment's token that has run out sends the user to
 * sign in again, rather than the call failing with a 401. The page's state is in its address, which
 * the sign-in brings it back to.
 */
export async function ensureSignedIn(): Promise<void> {
  const c = connection();
  if (c.mode === "oidc" && isExpired(c.user)) await signIn(c.config);
}
