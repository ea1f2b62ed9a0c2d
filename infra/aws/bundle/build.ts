import { build, type BuildOptions, type Metafile } from "esbuild";
import { join } from "node:path";
import { langchainLoadMap, langsmithClientOff, sideEffectFree, zodNamespaceImports, type Trim } from "./trims";

export interface BundleOptions {
  /** the handler's source file */
  entry: string;
  /** the directory that becomes the function's code: index.js and its source map */
  outdir: string;
  /** bundle LangSmith's client for tracing to LangSmith; otherwise it is left out */
  langsmith?: boolean;
}

/**
 * The one build of a function's code: the stack deploys it and `npm run bench -- cold-start`
 * measures it. Node 22 CommonJS, minified, `@aws-sdk/*` from the Lambda runtime, a source map
 * (the functions run with --enable-source-maps), and the trims that leave out library code the
 * functions never run (trims.ts).
 */
export async function bundleFunction({ entry, outdir, langsmith = false }: BundleOptions): Promise<Metafile> {
  const trims: Trim[] = [zodNamespaceImports(), langchainLoadMap(), sideEffectFree()];
  if (!langsmith) trims.push(langsmithClientOff());
  const result = await build({
    ...esbuildBase,
    entryPoints: [entry],
    outfile: join(outdir, "index.js"),
    plugins: trims.map((t) => t.plugin),
  });
  const missed = trims.filter((t) => t.hits() === 0 && usesTarget(t, result.metafile));
  if (missed.length > 0)
    throw new Error(
      `bundle trims found nothing to rewrite: ${missed.map((t) => t.name).join(", ")}; a library upgrade moved their target (infra/aws/bundle/trims.ts)`,
    );
  return result.metafile;
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
  // Stack traces need file and line only. Without the sources the map --enable-source-maps
  // reads at load is a quarter of the size (chat: 4.9 MB to 1.2 MB, ~40 ms less init).
  sourcesContent: false,
  platform: "node",
  target: "node22",
  format: "cjs",
  // DuckDB is a native addon (a .node binary per platform) that esbuild cannot bundle: it is
  // loaded from node_modules, only when a session has data files (shared/files/sql-sandbox.ts).
  external: ["@aws-sdk/*", "@duckdb/*"],
  metafile: true,
  logLevel: "warning",
} satisfies BuildOptions;
