import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");

/** The playground's sources (infra/playground). */
export const PLAYGROUND_SOURCE = join(ROOT, "infra/playground");

/**
 * `node <these>` builds the page with Vite into `outDir`, as `npm run playground:build` does into
 * dist/: the one build the AWS deployment, the browser tests and the bench all run. Run it with
 * NODE_ENV=production, or React's development build goes in.
 */
export function playgroundBuildArgs(outDir: string): string[] {
  return [
    join(ROOT, "node_modules/vite/bin/vite.js"),
    "build",
    "--config",
    join(PLAYGROUND_SOURCE, "vite.config.ts"),
    "--outDir",
    outDir,
    "--emptyOutDir",
  ];
}
