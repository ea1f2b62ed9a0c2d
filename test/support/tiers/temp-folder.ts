import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Vitest's global setup: the run's own temp folder. Every worker inherits TMPDIR, so whatever a test
 * or a library it drives leaves in os.tmpdir() (CDK's cdk.out folders, bundles, stacks' data
 * folders) lands here and is removed with it when the run ends, passed or failed.
 */
export default function setup() {
  // Each tier's project runs its global setup: the first one makes the folder, the others share it.
  if (process.env.AGENT_TESTS_TMPDIR) return;
  const folder = mkdtempSync(join(tmpdir(), "agent-tests-"));
  process.env.AGENT_TESTS_TMPDIR = process.env.TMPDIR = folder;
  return () => {
    rmSync(folder, { recursive: true, force: true });
    delete process.env.AGENT_TESTS_TMPDIR;
  };
}
