import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the playground in Debian's Chromium, driven by playwright-core, against
 * the local stack started once for the run (global-setup.ts). Not part of `npm test`: its files
 * end in .spec.ts, which the main config's include (test/**\/*.test.ts) does not match.
 */
export default defineConfig({
  test: {
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/browser/**/*.spec.ts"],
    globalSetup: ["test/support/tiers/temp-folder.ts", "test/browser/global-setup.ts"],
    // One browser and one stack on a 2-core machine: files run one after another.
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 120_000,
    env: { LOG_LEVEL: "SILENT" },
  },
});
