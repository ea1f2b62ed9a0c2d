import type { Plugin } from "esbuild";
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";

/**
 * esbuild plugins that leave out library code a function never runs. Each is narrow (a rewrite
 * of one library file, or a flag on four packages' modules), written by hand because no bundler
 * option expresses it: the
 * libraries ship without `sideEffects` flags and reach the code through live namespace objects,
 * so tree shaking alone keeps all of it. Every trim records whether it fired; `bundleFunction`
 * fails the build when one did not (a library upgrade moved its target), so a bundle never
 * silently grows back. Sizes are what each removes from the chat bundle with the others in place
 * (1518 KB untrimmed, 809 KB trimmed).
 */
export interface Trim {
  name: string;
  /** a bundle holding a file that matches this must have been trimmed: it is the trim's target */
  target: RegExp;
  plugin: Plugin;
  /** how many files it rewrote in the last build */
  hits: () => number;
  /** a bundle holding a file that matches this runs the code the trim leaves out: built without it */
  unless?: RegExp;
}

function trim(
  name: string,
  target: RegExp,
  filter: RegExp,
  rewrite: (source: string, path: string) => string | undefined,
): Trim {
  let hits = 0;
  return {
    name,
    target,
    hits: () => hits,
    plugin: {
      name,
      setup(build) {
        build.onStart(() => {
          hits = 0;
        });
        build.onLoad({ filter }, async ({ path }) => {
          const contents = rewrite(await readFile(path, "utf8"), path);
          if (contents === undefined) return undefined;
          hits++;
          return { contents, loader: path.endsWith(".ts") ? "ts" : "js", resolveDir: dirname(path) };
        });
      },
    },
  };
}

const ZOD_NAMED_Z = /^import \{ z(?: as ([\w$]+))? \} from (["']zod(?:\/v3|\/v4|\/mini|\/v4-mini)?["']);?$/gm;

/**
 * `import { z } from "zod/v4"` becomes `import * as z from "zod/v4"`. Zod's `z` export is that
 * module's own namespace, so the two are the same object to the code; but esbuild shakes a
 * namespace import down to the members used, while a named `z` makes it keep every export,
 * every locale included. LangGraph and @langchain/core import zod the named way (~95 KB of the
 * chat bundle once the other trims are in; the project's own code imports zod as a namespace).
 */
export const zodNamespaceImports = (): Trim =>
  trim(
    "zod-namespace-imports",
    /@langchain\/core\/dist\/tools\/index\.js$/,
    /node_modules\/@langchain\/.*\.js$/,
    (source) => {
      const rewritten = source.replace(
        ZOD_NAMED_Z,
        (_all, alias: string | undefined, from: string) => `import * as ${alias ?? "z"} from ${from};`,
      );
      return rewritten === source ? undefined : rewritten;
    },
  );

/**
 * The checkpoint serializer revives LangChain objects with @langchain/core's `load()`, whose
 * import map pulls in every core module (prompts, parsers, retrievers, vector stores, testing
 * fakes...) so that any class could be named in a payload. The agents' checkpoints hold messages
 * and plain data only, so the map keeps the message, document and output classes (~155 KB).
 * A checkpoint naming another class fails to load with core's own "Invalid identifier" error.
 */
export const langchainLoadMap = (): Trim =>
  trim(
    "langchain-load-map",
    /@langchain\/core\/dist\/load\/import_map\.js$/,
    /node_modules\/@langchain\/core\/dist\/load\/import_map\.js$/,
    (source) => {
      const kept: Record<string, [binding: string, from: string]> = {
        messages: ["messages_exports", "../messages/index.js"],
        messages__tool: ["tool_exports", "../messages/tool.js"],
        documents: ["documents_exports", "../documents/index.js"],
        outputs: ["outputs_exports", "../outputs.js"],
      };
      for (const [key, [binding, from]] of Object.entries(kept)) {
        // Refuse to rewrite a map whose layout is not the one this was written against.
        if (!source.includes(`import { ${binding} } from "${from}";`) || !source.includes(`${key}: () => ${binding}`))
          return undefined;
      }
      const entries = Object.entries(kept);
      return [
        `import { __exportAll } from "../_virtual/_rolldown/runtime.js";`,
        ...entries.map(([, [binding, from]]) => `import { ${binding} } from "${from}";`),
        `var import_map_exports = /* @__PURE__ */ __exportAll({ ${entries.map(([k, [b]]) => `${k}: () => ${b}`).join(", ")} });`,
        `export { import_map_exports, ${entries.map(([k, [b]]) => `${b} as ${k}`).join(", ")} };`,
      ].join("\n");
    },
  );

const LANGSMITH_OFF = `LangSmith is not bundled into this function: it was built with the stack's \`langsmith\` context off. Deploy with -c langsmith=true to trace to LangSmith.`;

/**
 * With tracing off LangSmith's API client never sends anything, yet @langchain/core reaches it
 * (and the package's REST SDK) through run trees: every RunTree constructs a shared client even
 * when untraced (~205 KB). The client becomes an inert stand-in: constructing it is harmless,
 * calling any of its methods throws an error naming the setting that bundles the real one.
 */
export const langsmithClientOff = (): Trim =>
  trim(
    "langsmith-client-off",
    /langsmith\/lib\/run_trees\.mjs$/,
    /node_modules\/langsmith\/(index|lib\/client)\.mjs$/,
    (_source, path) =>
      path.endsWith("/index.mjs")
        ? `export { RunTree } from "./run_trees.mjs";\nexport { Client } from "./lib/client.mjs";`
        : `const off = () => { throw new Error(${JSON.stringify(LANGSMITH_OFF)}); };
export class Client {
  constructor() {
    return new Proxy(this, { get: (target, key) => (key in target || typeof key === "symbol" || key === "then" ? target[key] : off) });
  }
}`,
  );

const JSON_SCHEMA_OFF = `JSON-schema validation is not bundled into this function: its tools declare zod schemas, which LangChain validates with zod (infra/aws/bundle/trims.ts, jsonSchemaValidatorOff).`;
const JSON_SCHEMA_KEPT = ["deep-compare-strict", "dereference", "pointer", "types", "ucs2-length"];

/**
 * @cfworker/json-schema validates a tool's input when the tool declares a JSON schema; a zod
 * schema is validated by zod. The agents' own tools declare zod, so the validator (and its format
 * checks, 19 KB of each agent's first request) is code those functions never run: its two exports
 * become functions that throw an error naming this trim. LangChain's other uses of the package
 * (deepCompareStrict, dereference) are kept.
 */
export const jsonSchemaValidatorOff = (): Trim => ({
  ...trim(
    "json-schema-validator-off",
    /@cfworker\/json-schema\/dist\/esm\/validate\.js$/,
    /node_modules\/@cfworker\/json-schema\/dist\/esm\/index\.js$/,
    (source) => {
      // Refuse to rewrite an index whose layout is not the one this was written against.
      const expected = [...JSON_SCHEMA_KEPT, "format", "validate", "validator"];
      if (!expected.every((name) => source.includes(`export * from './${name}.js';`))) return undefined;
      return [
        ...JSON_SCHEMA_KEPT.map((name) => `export * from './${name}.js';`),
        `const off = () => { throw new Error(${JSON.stringify(JSON_SCHEMA_OFF)}); };`,
        `export function validate() { off(); }`,
        `export class Validator { constructor() { off(); } }`,
      ].join("\n");
    },
  ),
  // An MCP server's tools declare JSON schemas (graph/support/mcp-tools.ts): the support worker's
  // bundle keeps the validator.
  unless: /node_modules\/@langchain\/mcp-adapters\//,
});

const BEDROCK_DEFAULT_HANDLER = "NodeHttp2Handler as RequestHandler";

/**
 * Bedrock's runtime client falls back to the SDK's HTTP/2 handler when it is given none. Ours is
 * always given one (HTTP/1.1 with keep-alive, shared/models/bedrock-client.ts, which says why),
 * so the fallback is code the functions never run, and it alone brings in Node's http2 module
 * (about 2 ms of a first request's load, in the SDK chunk every function shares). The fallback
 * becomes the HTTP/1.1 handler.
 */
export const bedrockHttp1 = (): Trim =>
  trim(
    "bedrock-http1",
    /@aws-sdk\/client-bedrock-runtime\/dist-es\/runtimeConfig\.js$/,
    /node_modules\/@aws-sdk\/client-bedrock-runtime\/dist-es\/runtimeConfig\.js$/,
    (source) =>
      source.includes(BEDROCK_DEFAULT_HANDLER)
        ? source.replace(BEDROCK_DEFAULT_HANDLER, "NodeHttpHandler as RequestHandler")
        : undefined,
  );

const GLOBAL_BUILTIN_IMPORT = /^import \{ ([\w$]+(?:, [\w$]+)*) \} from "node:(process|stream\/web)";$/gm;

/**
 * `import { env } from "node:process"` becomes `const { env } = globalThis.process;` in the two
 * library files that import a built-in Node also has as a global (the SDK's user agent, middy's
 * web streams). In an ES module, importing a built-in builds its facade, which reads every export:
 * for `node:process` that loads process.report, the allowed-flags list and more, 4.4 ms of a cold
 * start here against 1 ms for the global (paired runs, `test/bench/cold-start.ts`'s harness); for
 * `node:stream/web`, every web stream class, 0.8 ms. The values are the same objects.
 */
export const globalBuiltins = (): Trim =>
  trim(
    "global-builtins",
    /@aws-sdk\/core\/dist-es\/submodules\/client\/util-user-agent-node\/defaultUserAgent\.js$/,
    /node_modules\/(@aws-sdk\/core\/dist-es\/submodules\/client\/util-user-agent-node\/[\w-]+|@middy\/core\/index)\.js$/,
    (source) => {
      const rewritten = source.replace(
        GLOBAL_BUILTIN_IMPORT,
        (_all, names: string, module: string) =>
          `const { ${names} } = ${module === "process" ? "globalThis.process" : "globalThis"};`,
      );
      return rewritten === source ? undefined : rewritten;
    },
  );

const SIDE_EFFECT_FREE =
  /node_modules\/(@langchain\/core|@langchain\/langgraph-checkpoint|langsmith|@cfworker\/json-schema)\//;
/** A bare import naming one of those packages. */
const SIDE_EFFECT_FREE_IMPORT =
  /^(@langchain\/core|@langchain\/langgraph-checkpoint|langsmith|@cfworker\/json-schema)(\/|$)/;

/**
 * Whether an import can land in one of those packages: a bare one only by naming them; a path
 * (relative or absolute) when it is written inside them or points into them; a package's own
 * `#imports` only inside them. The others are left to esbuild untouched: resolving every import a
 * second time in JavaScript took most of a bundle's build time (chat's 3.6 s to 1.5 s).
 */
function mayLandInSideEffectFree(path: string, importer: string, resolveDir: string): boolean {
  if (path.startsWith("#")) return SIDE_EFFECT_FREE.test(importer);
  if (path.startsWith(".") || isAbsolute(path))
    return SIDE_EFFECT_FREE.test(importer) || SIDE_EFFECT_FREE.test(resolve(resolveDir, path));
  return SIDE_EFFECT_FREE_IMPORT.test(path);
}

/**
 * These packages' modules only declare classes and functions, but their package.json files do
 * not say so (no `sideEffects: false`), so esbuild keeps every module they import even when no
 * export of it is used: core's XML parser, its JSON-schema validator and more (~25 KB), and the
 * checkpoint package's in-memory saver (7 KB, which no function uses: without the flag it rode in
 * the chunk every request loads). Flagging them lets those go. LangGraph is not flagged: it sets
 * up AsyncLocalStorage as an import side effect.
 */
export const sideEffectFree = (): Trim => {
  let hits = 0;
  return {
    name: "side-effect-free",
    target: /@langchain\/core\/dist\//,
    hits: () => hits,
    plugin: {
      name: "side-effect-free",
      setup(build) {
        build.onStart(() => {
          hits = 0;
        });
        build.onResolve({ filter: /.*/ }, async ({ path, kind, importer, resolveDir, pluginData }) => {
          if (kind === "entry-point" || pluginData === SIDE_EFFECT_FREE) return undefined;
          if (!mayLandInSideEffectFree(path, importer, resolveDir)) return undefined;
          const resolved = await build.resolve(path, { kind, importer, resolveDir, pluginData: SIDE_EFFECT_FREE });
          if (resolved.errors.length > 0 || resolved.external || !SIDE_EFFECT_FREE.test(resolved.path)) return resolved;
          hits++;
          return { ...resolved, sideEffects: false };
        });
      },
    },
  };
};
