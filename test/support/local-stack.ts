import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";

/**
 * The stack `npm start` runs, for one test file: a fresh data folder, a free port, quiet logs;
 * started before the file's tests and closed (its folder removed) after them. Read `.stack`
 * inside tests; `.dataDir` is its DATA_DIR.
 */
export function localStackForTests(
  name: string,
  env: Record<string, string> = {},
): { stack: LocalStack; dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const holder = { dataDir } as { stack: LocalStack; dataDir: string };
  beforeAll(async () => {
    holder.stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT", ...env });
  }, 60_000);
  afterAll(async () => {
    await holder.stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return holder;
}
