import type { Metafile } from "esbuild";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * DuckDB, as the data function loads it in Lambda: its packages copied beside the bundle (esbuild
 * cannot bundle a native addon), with the Linux x64 binding, so that function runs on x86_64
 * (infra/manifest.ts `native`). No npm package ships a DuckDB binding that a bundler could inline,
 * hence this copy.
 */
const DUCKDB = {
  entry: "@duckdb/node-api",
  packages: ["@duckdb/node-api", "@duckdb/node-bindings", "@duckdb/node-bindings-linux-x64", "detect-libc"],
  binding: "@duckdb/node-bindings-linux-x64",
};

/** Whether a bundle imports DuckDB (left external by the build). */
export const importsDuckDb = (meta: Metafile) =>
  Object.values(meta.outputs).some((o) => o.imports.some((i) => i.external && i.path === DUCKDB.entry));

/** The native module a function may ship (infra/manifest.ts `native`). */
export type NativeModule = "duckdb";
/** Lambda's architecture names as Node's process.arch spells them. */
export type Arch = "x64" | "arm64";

/** The architecture a function runs on: its native module's, or Graviton. */
export const architectureOf = (native: NativeModule | undefined): Arch => (native === "duckdb" ? "x64" : "arm64");

/**
 * Copies DuckDB's packages into the function's code when its bundle imports DuckDB, which only a
 * function declaring it may do: any other runs on arm64, where the x64 binding would load nowhere.
 * Then checks that every native binary in the code is for the function's architecture.
 */
export function copyNativeModules(meta: Metafile, outdir: string, native?: NativeModule): void {
  if (importsDuckDb(meta)) {
    if (native !== "duckdb")
      throw new Error(
        "the bundle imports DuckDB, a native addon, but its function declares no native module " +
          "(infra/manifest.ts `native`): it runs on arm64 without native code. Reach the data function " +
          "through shared/files/data-engine.ts instead of importing the engine.",
      );
    copyDuckDb(outdir);
  }
  checkNativeArchitecture(outdir, architectureOf(native));
}

/**
 * Fails when the code holds a native binary (a .node file) for another platform than Lambda's
 * Linux on `arch`: named by its package (node-bindings-linux-x64) or, for a package that does not
 * say, any binary at all in a function that declares no native module.
 */
export function checkNativeArchitecture(outdir: string, arch: Arch): void {
  for (const file of nativeBinaries(outdir)) {
    const where = relative(outdir, file);
    const platform = /(linux|darwin|win32|freebsd)-(x64|arm64|ia32|arm)(?![a-z0-9])/.exec(where.split(sep).join("/"));
    if (platform ? platform[1] !== "linux" || platform[2] !== arch : arch === "arm64")
      throw new Error(
        `the bundle ships native code for ${platform ? `${platform[1]}-${platform[2]}` : "an unknown platform"} ` +
          `(${where}) but its function runs on linux-${arch}`,
      );
  }
}

function nativeBinaries(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".node"))
    .map((e) => join(e.parentPath, e.name));
}

function copyDuckDb(outdir: string): void {
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
