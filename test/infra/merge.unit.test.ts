import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { firstRequestLoads } from "../../infra/aws/bundle/first-request";
import { mergeChunks } from "../../infra/aws/bundle/merge";

/**
 * A bundle as esbuild leaves it, in `<root>/out`: an entry importing a chunk at init, a chunk the
 * first request imports, and one only some requests import; the entry's source map points at
 * `<root>/src/handler.ts`. Beside them, a file that is not esbuild's.
 */
function esbuildOutput() {
  const root = mkdtempSync(join(tmpdir(), "merge-"));
  const out = join(root, "out");
  mkdirSync(join(out, "chunks"), { recursive: true });
  const files: Record<string, string> = {
    "index.mjs": `import { a } from "./chunks/a.mjs";
export const loadDeferred = () => import("./chunks/turn.mjs");
export const rare = () => import("./chunks/rare.mjs");
export const handler = () => a;
//# sourceMappingURL=index.mjs.map`,
    "index.mjs.map": JSON.stringify({
      version: 3,
      sources: ["../src/handler.ts"],
      names: [],
      mappings: "AAAA;AACA;AACA;AACA", // each line to the same line of the source
    }),
    "chunks/a.mjs": `export const a = "a";`,
    "chunks/turn.mjs": `import { b } from "./b.mjs"; export const turn = b;`,
    "chunks/b.mjs": `export const b = "b";`,
    "chunks/rare.mjs": `export const r = "r";`,
  };
  for (const [name, code] of Object.entries(files)) writeFileSync(join(out, name), code);
  writeFileSync(join(out, "keep.txt"), "not esbuild's");
  return { root, out, outputs: Object.keys(files).map((name) => join(out, name)) };
}

const mjs = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".mjs") && !f.startsWith("."));

describe("mergeChunks", () => {
  it("merges what init and the first request load, keeps the rest its own file, and touches nothing else", async () => {
    const { out, outputs } = esbuildOutput();
    await mergeChunks(out, await firstRequestLoads(out), outputs);
    // A Rolldown hash may hold a dash: the files are named by the group or chunk they start with.
    const files = mjs(out).map((f) => /^(index\.mjs|chunks\/(init|first-request|rare)-)/.exec(f)?.[1] ?? f);
    // What init loads is in the entry (Rolldown folds a chunk only the entry imports into it), or in
    // one chunk beside it; the first request's is one chunk; the rare one stays a file of its own.
    expect(files.filter((f) => f !== "chunks/init-").sort()).toEqual([
      "chunks/first-request-",
      "chunks/rare-",
      "index.mjs",
    ]);
    expect(readFileSync(join(out, "keep.txt"), "utf8")).toBe("not esbuild's");
    expect(readdirSync(dirname(out)).filter((f) => f.includes("merged"))).toEqual([]);
    // The merged bundle still runs, its deferred and its rare imports included.
    const m = await import(pathToFileURL(join(out, "index.mjs")).href);
    expect(m.handler()).toBe("a");
    expect((await m.loadDeferred()).turn).toBe("b");
    expect((await m.rare()).r).toBe("r");
  });

  it("drops the createRequire() calls of esbuild's banner where nothing requires, and keeps the one that does", async () => {
    const { out, outputs } = esbuildOutput();
    // esbuild's banner (build.ts) on every file; only b.mjs calls require().
    const banner = `import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);\n`;
    for (const file of outputs.filter((f) => f.endsWith(".mjs")))
      writeFileSync(file, banner + readFileSync(file, "utf8"));
    writeFileSync(join(out, "chunks/b.mjs"), `${banner}export const b = require("node:path").basename("/x/b");`);
    await mergeChunks(out, await firstRequestLoads(out), outputs);
    const calls = (file: string) =>
      readFileSync(join(out, file), "utf8").split("createRequire(import.meta.url)").length - 1;
    const [firstRequest] = mjs(out).filter((f) => f.startsWith("chunks/first-request-"));
    expect(calls("index.mjs")).toBe(0);
    expect(calls(firstRequest!)).toBe(1);
    const m = await import(pathToFileURL(join(out, "index.mjs")).href);
    expect((await m.loadDeferred()).turn).toBe("b");
  });

  it("writes ASCII only, as esbuild did: non-ASCII text stays escaped", async () => {
    const { out, outputs } = esbuildOutput();
    writeFileSync(join(out, "chunks/b.mjs"), `export const b = "\\u2013\\ufffd" + /[\\u2028]/.source;`);
    await mergeChunks(out, await firstRequestLoads(out), outputs);
    for (const file of mjs(out)) expect(readFileSync(join(out, file), "utf8")).not.toMatch(/[^\t\n\r -~]/);
    const m = await import(pathToFileURL(join(out, "index.mjs")).href);
    expect((await m.loadDeferred()).turn).toBe("\u2013\ufffd[\\u2028]");
  });

  it("writes source maps whose sources resolve to the original files", async () => {
    const { root, out, outputs } = esbuildOutput();
    await mergeChunks(out, await firstRequestLoads(out), outputs);
    const map = JSON.parse(readFileSync(join(out, "index.mjs.map"), "utf8")) as { sources: string[] };
    expect(map.sources.map((s) => resolve(out, s))).toContain(join(root, "src/handler.ts"));
  });

  it("merges a bundle reached through a link as one reached directly", async () => {
    const { root, out, outputs } = esbuildOutput();
    const link = join(root, "link");
    symlinkSync(out, link);
    const loads = await firstRequestLoads(link);
    expect(loads.init.length).toBe(2);
    expect(loads.firstRequest.length).toBe(2);
    await mergeChunks(link, loads, outputs);
    expect(existsSync(join(out, "chunks/a.mjs"))).toBe(false);
    expect(mjs(out).some((f) => f.startsWith("chunks/first-request-"))).toBe(true);
  });
});
