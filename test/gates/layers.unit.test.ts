import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");

/** dependency-cruiser over the given paths with the project's layer rules; its report and exit code. */
async function cruise(paths: string[]) {
  return run("npx", ["depcruise", "--config", "test/gates/dependencies.cjs", "--output-type", "err", ...paths], {
    cwd: ROOT,
  }).then(
    (r) => ({ code: 0, out: r.stdout }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: err.stdout + err.stderr }),
  );
}

describe("layers", () => {
  it("hold across the code: shared/ imports no graph/, functions/ or infra/; graph/ no functions/ or infra/", async () => {
    const result = await cruise(["shared", "graph", "functions", "infra"]);
    expect(result.out).toMatch(/no dependency violations found/);
    expect(result.code).toBe(0);
  }, 60_000);

  it("fail when a shared/ file imports graph/ (the rule is live, not vacuous)", async () => {
    const probe = join(ROOT, "shared", `layer-probe-${randomUUID()}.ts`);
    writeFileSync(probe, 'export { CHECKPOINT_TABLE } from "../graph/checkpoint/schema";\n');
    try {
      const result = await cruise([`shared/${probe.split("/").pop()}`]);
      expect(result.code).not.toBe(0);
      expect(result.out).toContain("shared-is-the-bottom-layer");
    } finally {
      rmSync(probe, { force: true });
    }
  }, 60_000);
});
