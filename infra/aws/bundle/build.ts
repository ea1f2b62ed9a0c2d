import { build, type BuildOptions, type Metafile } from "esbuild";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { firstRequestLoads } from "./first-request";
import { mergeChunks } from "./merge";
import { copyNativeModules, type NativeModule } from "./native";
import {
  bedrockHttp1,
  globalBuiltins,
  jsonSchemaValidatorOff,
  langchainLoadMap,
  langsmithClientOff,
  sideEffectFree,
  zodNamespaceImports,
  type Trim,
} from "./trims";

export interface BundleOptions {
  /** the handler's source file */
  entry: string;
  /** the directory that becomes the function's code: index.mjs, its chunks and their source maps */
  outdir: string;
  /** bundle LangSmith's client for tracing to LangSmith; otherwise it is left out */
  langsmith?: boolean;
  /** the native module the function declares (infra/manifest.ts); without one it ships none */
  native?: NativeModule;
}

/**
 * The one build of a function's code: the stack deploys it and `npm run bench -- cold-start`
 * measures it. Node 22 ES modules, minified, a source map (read when an error's stack is printed,
 * shared/source-maps.ts), and the trims that leave out library code the functions never run
 * (trims.ts).
 *
 * ES modules for code splitting: what a handler defers (shared/deferred.ts) goes into chunks that
 * are read and compiled only when the first request imports them, so init compiles only the
 * handler's own checks. The chunks a cold start loads are then merged into one file per phase
 * (merge.ts). The AWS SDK is bundled from its ES modules rather than taken from the
 * runtime: tree-shaken to the commands the code sends. Chat's bundle holds 666 KB of SDK code (S3's
 * included, loaded only for attachments), where requiring the runtime's four CommonJS clients it
 * uses compiles 1,149 KB in 43 files (86 ms on the bench machine), most of a first request's load.
 */
export async function bundleFunction({ entry, outdir, langsmith = false, native }: BundleOptions): Promise<Metafile> {
  let trims: Trim[] = [
    zodNamespaceImports(),
    langchainLoadMap(),
    sideEffectFree(),
    bedrockHttp1(),
    globalBuiltins(),
    jsonSchemaValidatorOff(),
  ];
  if (!langsmith) trims.push(langsmithClientOff());
  let result = await esbuildWith(trims, entry, outdir);
  // A trim whose code a bundle does run (its `unless` matched an input): built again without it.
  const inputs = Object.keys(result.metafile.inputs);
  const kept = trims.filter((t) => t.hits() > 0 && t.unless && inputs.some((path) => t.unless!.test(path)));
  if (kept.length > 0) {
    for (const file of Object.keys(result.metafile.outputs)) rmSync(resolve(file), { force: true });
    trims = trims.filter((t) => !kept.includes(t));
    result = await esbuildWith(trims, entry, outdir);
  }
  const missed = trims.filter((t) => t.hits() === 0 && usesTarget(t, result.metafile));
  if (missed.length > 0)
    throw new Error(
      `bundle trims found nothing to rewrite: ${missed.map((t) => t.name).join(", ")}; a library upgrade moved their target (infra/aws/bundle/trims.ts)`,
    );
  // The data function's bundle loads DuckDB's native packages, copied beside it only below; it is
  // invoked by the other functions rather than by a client, and keeps esbuild's chunks.
  if (!native)
    await mergeChunks(
      outdir,
      await firstRequestLoads(outdir),
      Object.keys(result.metafile.outputs).map((file) => resolve(file)),
    );
  copyNativeModules(result.metafile, outdir, native);
  // esbuild's record of the inputs; its `outputs` name esbuild's files, which mergeChunks replaced.
  return result.metafile;
}

/** esbuild, as every function is built: ES modules split into chunks, with the given trims. */
function esbuildWith(trims: Trim[], entry: string, outdir: string) {
  return build({
    ...esbuildBase,
    format: "esm",
    splitting: true,
    entryPoints: { index: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    // ES module builds of packages that ship both, so tree shaking can work.
    mainFields: ["module", "main"],
    // DuckDB is a native addon (a .node binary per platform) that esbuild cannot bundle: its
    // packages are copied beside the data function's bundle (./native.ts); any other function
    // that imports it fails the build.
    external: ["@duckdb/*"],
    // CommonJS dependencies inside an ES module still call require() for Node's built-ins.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    plugins: trims.map((t) => t.plugin),
  });
}

/** A function that never imports the trim's target is not a missed trim. */
function usesTarget(trim: Trim, meta: Metafile): boolean {
  return Object.keys(meta.inputs).some((path) => trim.target.test(path));
}

/** What every function's build shares, the naive comparison bundle included. */
export const esbuildBase = {
  bundle: true,
  minify: true,
  sourcemap: true,
  // Stack traces need file and line only. Without the sources the map read for the first
  // logged error is a quarter of the size (chat: 4.9 MB to 1.2 MB).
  sourcesContent: false,
  platform: "node",
  target: "node22",
  metafile: true,
  logLevel: "warning",
} satisfies BuildOptions;
