import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");

/** dependency-cruiser over the given paths of the tree at `cwd`, with the project's layer rules. */
async function cruise(paths: string[], cwd: string) {
  const bin = join(ROOT, "node_modules/.bin/depcruise");
  const config = join(ROOT, "test/gates/dependencies.cjs");
  return run(bin, ["--config", config, "--output-type", "err", ...paths], { cwd }).then(
    (r) => ({ code: 0, out: r.stdout }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: err.stdout + err.stderr }),
  );
}

// `npm run lint` (in `npm test`) cruises the whole tree with these rules; this checks they bite.
describe("layers", () => {
  it("fail when a shared/ file imports graph/ (the rule is live, not vacuous)", async () => {
    // A tree of its own in the temp folder, so the repository is never written to.
    const tree = mkdtempSync(join(tmpdir(), "layer-probe-"));
    try {
      for (const dir of ["shared", "graph"]) mkdirSync(join(tree, dir));
      writeFileSync(join(tree, "tsconfig.json"), "{}\n");
      writeFileSync(join(tree, "graph/schema.ts"), 'export const TABLE = "checkpoints";\n');
      writeFileSync(join(tree, "shared/probe.ts"), 'export { TABLE } from "../graph/schema";\n');
      const result = await cruise(["shared/probe.ts"], tree);
      expect(result.code).not.toBe(0);
      expect(result.out).toContain("shared-is-the-bottom-layer");
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  }, 60_000);
});
