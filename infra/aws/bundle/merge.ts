import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { builtinModules } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { rolldown } from "rolldown";
import type { FirstRequestLoads } from "./first-request";

/**
 * Merges the chunks a cold start loads into two files: one for init, one for the first request.
 *
 * esbuild splits a bundle into a chunk per set of entry points that share code, and every dynamic
 * import is an entry point: the SDK's credential providers, S3's client, the data function's. Chat's
 * first turn so read 24 files and resolved about 200 imports between them, and Node's ES module
 * loader pays for each file and each import (a merged chat reached its first turn 11% faster in
 * 25 paired runs against the unmerged one, both loaded as the cold-start bench loads them). esbuild has no control of its chunks; Rolldown does (its code
 * splitting groups), so Rolldown rebundles esbuild's output: the files a cold start loads go into
 * the group of the phase that loads them, and every other file stays a chunk of its own, loaded by
 * the requests that need it. esbuild's trims and minification stay as they were; Rolldown only
 * prints the merged code without whitespace, and carries esbuild's source maps through to its own.
 */
export async function mergeChunks(
  bundleDir: string,
  loads: FirstRequestLoads,
  /** esbuild's files, which the merged ones replace: nothing else in the folder is touched */
  esbuildOutputs: string[],
): Promise<void> {
  // The real path: Node's loader names files by theirs (a temporary folder may be a link).
  const outdir = realpathSync(resolve(bundleDir));
  const entry = join(outdir, "index.mjs");
  // The entry stays the handler's file; the rest of init goes into one chunk beside it (or into it).
  const init = new Set(loads.init.filter((file) => file !== entry));
  const firstRequest = new Set(loads.firstRequest);
  const bundle = await rolldown({
    input: { index: entry },
    platform: "node",
    // What esbuild left external: Node's built-ins and the data function's DuckDB packages.
    external: [/^node:/, ...builtinModules, /^@duckdb\//],
    logLevel: "warn",
    // esbuild's banner gives every file a CommonJS `require` (build.ts). Rolldown drops the binding
    // where nothing uses it but kept the call, for its side effects: 36 createRequire() calls in
    // agent-server's cold start (1.3% of it in paired runs). Flagged pure, only the used ones stay.
    treeshake: { manualPureFunctions: ["__createRequire"] },
    plugins: [
      {
        name: "esbuild-source-maps",
        // Each file with its esbuild map, so the merged map points at the original sources.
        load(id) {
          const map = `${id}.map`;
          if (!id.startsWith(outdir) || !existsSync(map)) return null;
          return { code: readFileSync(id, "utf8"), map: readFileSync(map, "utf8") };
        },
      },
    ],
  });
  // Beside the folder, at its depth, so the maps' relative paths to the sources hold once moved in.
  const merged = mkdtempSync(join(dirname(outdir), `.${basename(outdir)}-merged-`));
  try {
    await bundle.write({
      dir: merged,
      format: "esm",
      entryFileNames: "[name].mjs",
      chunkFileNames: "chunks/[name]-[hash].mjs",
      sourcemap: true,
      sourcemapExcludeSources: true,
      // As esbuild printed it: Rolldown would write the escapes esbuild made as the characters, and
      // one such character makes Node decode the whole file the slow way (agent-server's init chunk:
      // 2.5 ms for 786 KB with three of them, 0.7 ms without).
      charset: "ascii",
      // esbuild minified the code already: printed without whitespace, names and all as they are.
      minify: { compress: false, mangle: false, codegen: { removeWhitespace: true } },
      codeSplitting: {
        groups: [
          { name: "init", test: (id) => init.has(id), priority: 2 },
          { name: "first-request", test: (id) => firstRequest.has(id), priority: 1 },
        ],
      },
    });
    for (const file of esbuildOutputs) rmSync(file, { force: true });
    for (const name of readdirSync(merged, { recursive: true, encoding: "utf8" })) {
      const from = join(merged, name);
      if (statSync(from).isDirectory()) continue;
      mkdirSync(dirname(join(outdir, name)), { recursive: true });
      renameSync(from, join(outdir, name));
    }
  } finally {
    await bundle.close();
    rmSync(merged, { recursive: true, force: true });
  }
}
