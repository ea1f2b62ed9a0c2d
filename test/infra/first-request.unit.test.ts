import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { firstRequestLoads } from "../../infra/aws/bundle/first-request";

/** A bundle folder from the given files (an entry, index.mjs, and its chunks). */
function bundleOf(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "first-request-"));
  mkdirSync(join(dir, "chunks"));
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code);
  return dir;
}

describe("firstRequestLoads", () => {
  it("tells what init imports from what loadDeferred then imports, and leaves out what neither does", async () => {
    const dir = bundleOf({
      "index.mjs": `import { a } from "./chunks/a.mjs";
        const rare = () => import("./chunks/rare.mjs");
        export const loadDeferred = () => import("./chunks/turn.mjs");
        export const handler = () => [a, rare];`,
      "chunks/a.mjs": `export const a = 1;`,
      "chunks/turn.mjs": `import { b } from "./b.mjs"; import { a } from "./a.mjs"; export const t = a + b;`,
      "chunks/b.mjs": `export const b = 2;`,
      "chunks/rare.mjs": `export const r = 3;`,
    });
    const loads = await firstRequestLoads(dir);
    expect(loads.init.map((f) => f.slice(dir.length + 1)).sort()).toEqual(["chunks/a.mjs", "index.mjs"]);
    // a.mjs was loaded at init: not counted again.
    expect(loads.firstRequest.map((f) => f.slice(dir.length + 1)).sort()).toEqual(["chunks/b.mjs", "chunks/turn.mjs"]);
  });

  it("takes a bundle without loadDeferred as init alone", async () => {
    const dir = bundleOf({ "index.mjs": `export const handler = () => 1;` });
    expect(await firstRequestLoads(dir)).toEqual({ init: [join(dir, "index.mjs")], firstRequest: [] });
  });

  it("fails the build with the bundle's own error when it cannot load", async () => {
    const dir = bundleOf({ "index.mjs": `throw new Error("needs SOME_SETTING at load");` });
    await expect(firstRequestLoads(dir)).rejects.toThrow(
      /failed to load for its cold start's files:[\s\S]*needs SOME_SETTING at load/,
    );
  });
});
