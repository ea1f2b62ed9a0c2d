import { fileURLToPath } from "node:url";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

const GUARD = fileURLToPath(new URL("test/support/tiers/unit-guard.ts", import.meta.url));

/**
 * Test tiers, named by file suffix (`*.<tier>.test.ts`), so a file's cost is visible in its name:
 * - unit: no PGlite, no local stack, no CDK synth (test/support/tiers/unit-guard.ts refuses them);
 *   dynalite, in process and started in milliseconds, is allowed. The inner loop: `npm run test:unit`,
 *   `npm run test:watch`.
 * - integration: PGlite (with dynalite beside it) in the test's own process, or other heavy work
 *   of its own (worker threads parsing megabytes of documents).
 * - e2e: the local stack, driven over HTTP; one stack per worker where a file needs only fresh users.
 * - infra: CDK synthesis, bundles, cfn-lint and cdk-nag.
 * - browser: the playground in Chromium (playwright-core), against a local stack started once for
 *   the tier (test/browser/global-setup.ts).
 * `npm test` runs every tier; `npm run test:<tier>` one.
 */
const tier = (name: string, test: TestProjectInlineConfiguration["test"] = {}, extra = {}) => ({
  extends: true as const,
  ...extra,
  test: { name, include: [`test/**/*.${name}.test.ts`], ...test },
});

export default defineConfig({
  test: {
    // @langchain/langgraph-checkpoint-validation registers its suites through vitest globals.
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Both cores: files of every tier start their own dynalite and PGlite on free ports, so two run
    // side by side safely (vitest's default on a 2-core machine is one).
    maxWorkers: 2,
    // A worker keeps one module graph across its files: LangGraph, the AWS SDK and aws-cdk-lib are
    // imported once a worker instead of once a file (half of the suite's time when isolated), and
    // e2e files can share the worker's local stack (test/support/local-stack.ts). Files stay
    // independent by starting their own backends on free ports and restoring what they mock.
    isolate: false,
    // The Lambda runtime's awslambda global, which streaming handlers call as they load; and a
    // rejection left unhandled fails the test during which it happened instead of hiding.
    setupFiles: ["infra/local/awslambda.ts", "test/support/fail-on-unhandled.ts"],
    // The run's own temp folder, removed when it ends: a test run leaves nothing in /tmp.
    globalSetup: ["test/support/tiers/temp-folder.ts"],
    // Coverage of the production code, with a floor at the level the suite reached when the floor
    // was set (issue 15): a change that drops coverage below it fails `npm test`.
    coverage: {
      provider: "v8",
      include: ["infra/**/*.ts", "functions/**/*.ts", "graph/**/*.ts", "shared/**/*.ts"],
      // The playground's browser code is covered by the browser tests (npm run test:browser), not here.
      exclude: [
        "infra/aws/app.ts",
        "infra/local/main.ts",
        "infra/**/cli.ts",
        "infra/supabase/set-embedding-dimension.ts",
        "infra/playground/**",
      ],
      reporter: ["text-summary", "json-summary"],
      reportsDirectory: ".local/coverage",
      // Measured when the floor was last raised: statements 92.6%, branches 82.7%, functions 93.0%, lines 94.6%.
      thresholds: { statements: 91, branches: 81, functions: 91, lines: 93 },
    },
    env: {
      // Node 20 here, 22 in Lambda: the SDK's upgrade notice is known and only noise in test output.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "SILENT",
      POWERTOOLS_METRICS_DISABLED: "true",
    },
    projects: [
      tier(
        "unit",
        { setupFiles: ["test/support/tiers/unit-guard.ts"] },
        {
          resolve: {
            alias: [{ find: /^@electric-sql\/pglite$/, replacement: GUARD }],
          },
        },
      ),
      tier("integration"),
      tier("e2e"),
      tier("infra"),
      tier("browser", {
        globalSetup: ["test/browser/global-setup.ts"],
        // One browser and one stack for the tier (its global setup); its files run beside the other
        // tiers' instead of after them, where one core sat idle for the tier's 50 s.
        testTimeout: 90_000,
        hookTimeout: 120_000,
      }),
    ],
  },
});
