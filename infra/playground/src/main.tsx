import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { connect } from "./auth/connection";
import { SignIn } from "./auth/SignIn";
import "./styles.css";

const root = createRoot(document.getElementById("root")!);
// The page first learns where the API is and who the user is (/config.json; a deployment's sign-in).
connect().then(
  (connection) =>
    root.render(
      <StrictMode>
        {connection.mode === "signed-out" ? <SignIn config={connection.config} error={connection.error} /> : <App />}
      </StrictMode>,
    ),
  (err: unknown) => root.render(<SignIn error={err instanceof Error ? err.message : String(err)} />),
);
