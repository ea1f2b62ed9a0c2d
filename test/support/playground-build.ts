import { execFileSync } from "node:child_process";
import { playgroundBuildArgs } from "../../infra/playground-build";
import { PLAYGROUND_DIST } from "../../infra/local/playground-server";

/** Builds the playground into infra/playground/dist, as `npm start` does before it starts. */
export function buildPlayground(): void {
  execFileSync(process.execPath, playgroundBuildArgs(PLAYGROUND_DIST), {
    // React's production build, though vitest runs with NODE_ENV=test.
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "inherit", "inherit"],
  });
}
