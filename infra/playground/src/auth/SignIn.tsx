import { useState } from "react";
import { ErrorNote } from "../ErrorNote";
import { type OidcConfig, signIn, signInProblem } from "./oidc";
import "./sign-in.css";

/**
 * A deployment's front door: one button to the issuer's sign-in page. A click, never an automatic
 * redirect, so a misconfigured issuer shows its error here instead of bouncing the browser forever.
 */
export function SignIn({ config, error }: { config?: OidcConfig; error?: string }) {
  const [problem, setProblem] = useState(error);
  const [busy, setBusy] = useState(false);
  const start = async () => {
    if (!config) return;
    setBusy(true);
    try {
      await signIn(config);
    } catch (err) {
      setProblem(signInProblem(err));
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <h1>Agent playground</h1>
      {config && (
        <>
          <p>Sign in with {new URL(config.issuer).host} to talk to the agent as yourself.</p>
          <button type="button" onClick={() => void start()} disabled={busy}>
            {busy ? "Opening the sign-in page…" : "Sign in"}
          </button>
        </>
      )}
      {problem && (
        <ErrorNote
          error={{
            code: config ? "sign_in_failed" : "config_unavailable",
            message: problem,
          }}
        />
      )}
    </main>
  );
}
