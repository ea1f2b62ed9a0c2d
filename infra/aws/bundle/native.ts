import type { Metafile } from "esbuild";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * DuckDB, as the data-file functions load it in Lambda: its packages copied beside the bundle
 * (esbuild cannot bundle a native addon), with the Linux x64 binding, so those functions run on
 * x86_64 (infra/manifest.ts `native`). No npm package ships a DuckDB binding that a bundler could
 * inline, hence this copy.
 */
const DUCKDB = {
  entry: "@duckdb/node-api",
  packages: ["@duckdb/node-api", "@duckdb/node-bindings", "@duckdb/node-bindings-linux-x64", "detect-libc"],
  binding: "@duckdb/node-bindings-linux-x64",
};

/** Whether a bundle imports DuckDB (left external by the build). */
export const importsDuckDb = (meta: Metafile) =>
  Object.values(meta.outputs).some((o) => o.imports.some((i) => i.external && i.path === DUCKDB.entry));

/** Copies DuckDB's packages into the function's code when its bundle imports DuckDB. */
export function copyNativeModules(meta: Metafile, outdir: string): void {
  if (!importsDuckDb(meta)) return;
  const source = (name: string) => join(ROOT, "node_modules", name);
  if (!existsSync(source(DUCKDB.binding))) {
    const version = JSON.parse(readFileSync(join(source("@duckdb/node-bindings"), "package.json"), "utf8")).version;
    throw new Error(
      `DuckDB's Linux x64 binding is not installed (npm installs only this machine's platform): ` +
        `run \`npm install --no-save --force ${DUCKDB.binding}@${version}\` and build again`,
    );
  }
  for (const name of DUCKDB.packages) {
    if (existsSync(source(name))) cpSync(source(name), join(outdir, "node_modules", name), { recursive: true });
  }
}
