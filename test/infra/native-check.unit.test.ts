import type { Metafile } from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkNativeArchitecture, copyNativeModules } from "../../infra/aws/bundle/native";

/** A function's code folder holding a native binary at `path`. */
let dir: string;
const codeWith = (path: string) => {
  dir = mkdtempSync(join(tmpdir(), "native-check-"));
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), "\u007fELF");
  return dir;
};
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** esbuild's metafile of a bundle that leaves DuckDB external (or not). */
const meta = (importsDuckDb: boolean): Metafile => ({
  inputs: {},
  outputs: {
    "index.mjs": {
      bytes: 1,
      inputs: {},
      exports: [],
      imports: importsDuckDb ? [{ path: "@duckdb/node-api", kind: "dynamic-import", external: true }] : [],
    },
  },
});

describe("a bundle's native code must match its function's architecture", () => {
  it("fails an arm64 function that ships the Linux x64 binding", () => {
    const out = codeWith("node_modules/@duckdb/node-bindings-linux-x64/duckdb.node");
    expect(() => checkNativeArchitecture(out, "arm64")).toThrow(/linux-x64.*runs on linux-arm64/);
  });

  it("fails a binding for another operating system, whatever the architecture", () => {
    const out = codeWith("node_modules/@duckdb/node-bindings-darwin-x64/duckdb.node");
    expect(() => checkNativeArchitecture(out, "x64")).toThrow(/darwin-x64/);
  });

  it("fails an arm64 function that ships a binary whose package does not say its platform", () => {
    const out = codeWith("node_modules/some-addon/build/Release/addon.node");
    expect(() => checkNativeArchitecture(out, "arm64")).toThrow(/unknown platform/);
  });

  it("passes the binding of the function's own architecture", () => {
    const out = codeWith("node_modules/@duckdb/node-bindings-linux-x64/duckdb.node");
    expect(() => checkNativeArchitecture(out, "x64")).not.toThrow();
  });

  it("fails a bundle that imports DuckDB when its function declares no native module", () => {
    dir = mkdtempSync(join(tmpdir(), "native-check-"));
    expect(() => copyNativeModules(meta(true), dir)).toThrow(/declares no native module/);
    expect(() => copyNativeModules(meta(false), dir)).not.toThrow();
  });
});
