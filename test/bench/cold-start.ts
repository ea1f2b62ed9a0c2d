import { build, type Metafile } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { bundleFunction, esbuildBase } from "../../infra/aws/bundle/build";
import { firstRequestLoads } from "../../infra/aws/bundle/first-request";
import { FUNCTIONS as MANIFEST } from "../../infra/manifest";
import { median, printTable } from "./table";

/**
 * Cold start: each function's bundle built by the stack's own build (infra/aws/bundle), against
 * a naive bundle that imports whole packages (LangGraph, @langchain/aws, the DynamoDB, SQS and
 * Supabase clients) built as CDK's NodejsFunction builds by default (CommonJS, unminified, no
 * source maps, the SDK left to the runtime), and the same minified. For each: the size, the
 * median time to require() it in a fresh Node process run as Lambda runs it, and what the first
 * request then loads (the modules a handler defers, shared/deferred.ts). The goal (issue 17):
 * every API function's init plus first-request loads at most half the naive bundle's init.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const FUNCTIONS = process.env.BENCH_FUNCTIONS ? process.env.BENCH_FUNCTIONS.split(",") : MANIFEST.map((f) => f.name); // every function of the deployment manifest
/**
 * Rounds per bundle. With eleven (and a ratio of medians), near-identical bundles (agent-server and
 * agent-server-stream) came out 0.07 apart in one run on this 2-core machine.
 */
const RUNS = 21;
/**
 * The goal's figure as issue 30 found it (init + first-request loads / the naive bundle run
 * without source maps, docs/costs-and-benchmarks.md before it), printed beside today's. That run
 * was on a loaded machine (the naive init 250.8 ms, about twice a quiet run's), which moves ratios.
 */
const BEFORE: Record<string, string> = {
  chat: "0.58",
  "chat-stream": "0.65",
  sessions: "0.43",
  memories: "0.36",
  files: "0.38",
  "file-uploaded": "0.42",
  health: "0.36",
  "agent-server": "0.59",
  "agent-server-stream": "0.63",
  knowledge: "-",
};

/**
 * The goal's figure before this session's cold-start work (`6ad531a`, docs/costs-and-benchmarks.md
 * then, a run of 2026-11-27 on a quiet machine), printed beside today's. That run loaded the bundles
 * from a CommonJS script; they are now loaded as Lambda's runtime loads them (coldStart).
 */
const PREVIOUS: Record<string, string> = {
  chat: "0.57",
  "chat-stream": "0.57",
  sessions: "0.33",
  memories: "0.32",
  files: "0.33",
  "file-uploaded": "0.33",
  data: "0.28",
  knowledge: "0.46",
  me: "0.33",
  "session-retention": "0.32",
  health: "0.32",
  "agent-server": "0.64",
  "agent-server-stream": "0.61",
  "run-worker": "0.59",
  "webhook-sender": "0.32",
  "memory-extraction": "0.44",
  ingest: "0.54",
  "intercom-webhook": "0.33",
  "support-worker": "0.82",
  authorizer: "0.27",
};

const NAIVE = `
import * as langgraph from "@langchain/langgraph";
import * as aws from "@langchain/aws";
import * as dynamodb from "@aws-sdk/client-dynamodb";
import * as sqs from "@aws-sdk/client-sqs";
import * as supabase from "@supabase/supabase-js";
export const handler = async () => [langgraph, aws, dynamodb, sqs, supabase].length;
`;

/**
 * What Lambda's Node.js runtime has loaded before it loads a handler: the runtime interface client
 * is itself an ES module (the ESM loader is up), and its modules require these built-ins. Loading
 * them first here, outside the timing, keeps the bench from charging a bundle for them.
 */
const RUNTIME_BUILTINS = ["http", "net", "assert", "util", "fs", "path", "module"];

/**
 * One fresh process: the bundle loaded as Lambda's runtime loads it (import() for an ES module, the
 * stack's; require() for a CommonJS one, the naive), then its deferred imports (if any), in ms.
 */
function coldStart(file: string, nodeOptions: string[]): { init: number; deferred: number } {
  const script = [
    `import { createRequire } from "node:module";`,
    `const require = createRequire(import.meta.url);`,
    ...RUNTIME_BUILTINS.map((b) => `require(${JSON.stringify(b)});`),
    // The runtime's awslambda global, which the streaming handler calls as it loads.
    `globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };`,
    `const t0 = process.hrtime.bigint();`,
    `const m = ${file.endsWith(".mjs")} ? await import(${JSON.stringify(file)}) : require(${JSON.stringify(file)});`,
    `const t1 = process.hrtime.bigint();`,
    `if (m.loadDeferred) await m.loadDeferred();`,
    `const t2 = process.hrtime.bigint();`,
    `process.stdout.write(JSON.stringify([Number(t1 - t0) / 1e6, Number(t2 - t1) / 1e6]));`,
  ].join("\n");
  const out = execFileSync(process.execPath, [...nodeOptions, "--input-type=module", "-e", script], {
    // The runtime provides @aws-sdk/* to the naive bundle: here it resolves from the project's node_modules.
    env: {
      ...process.env,
      NODE_PATH: join(ROOT, "node_modules"),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      AWS_REGION: "us-east-1",
    },
  });
  const [init, deferred] = JSON.parse(out.toString()) as [number, number];
  return { init, deferred };
}

interface Subject {
  name: string;
  file: string;
  /** the files its init reads: the entry, and for the stack's bundles the chunk merged for init */
  initFiles: string[];
  nodeOptions: string[];
  init: number[];
  total: number[];
  /** the naive bundle's init in the process started beside each of this bundle's */
  beside: number[];
}

/**
 * Paired and interleaved: each round starts every bundle once, in an order rotated per round, and
 * the naive bundle right beside each (before it in one round, after it in the next). This machine's
 * speed drifts by up to half between moments (the same bundle's CPU time 95–145 ms), so a bundle's
 * ratio is the median of its ratios to the naive start beside it: a ratio of medians taken seconds
 * apart moved 0.45–0.56 between runs of the same code.
 */
function measurePaired(naive: Subject, subjects: Subject[]): void {
  const start = (s: Subject) => {
    const { init, deferred } = coldStart(s.file, s.nodeOptions);
    s.init.push(init);
    s.total.push(init + deferred);
    return init;
  };
  for (let round = 0; round < RUNS; round++) {
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[(i + round) % subjects.length]!;
      if ((round + i) % 2 === 0) {
        s.beside.push(start(naive));
        start(s);
      } else {
        start(s);
        s.beside.push(start(naive));
      }
    }
  }
  naive.beside.push(...naive.init);
}

/** The median of a bundle's times over the naive starts beside them. */
const pairedRatio = (times: number[], beside: number[]) => median(times.map((t, k) => t / beside[k]!));

/** A bundle's code on disk: its entry and every chunk (the stack's are merged after esbuild, infra/aws/bundle/merge.ts). */
const codeKB = (entry: string) => {
  const dir = dirname(entry);
  return (
    readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => /\.m?js$/.test(f) && !f.startsWith("node_modules")) // the data function's DuckDB packages
      .reduce((n, f) => n + statSync(join(dir, f)).size, 0) / 1024
  );
};

/** The largest inputs of a bundle, by bytes they contribute: where to cut next. */
function biggest(meta: Metafile, n = 4): string {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(meta.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const key = m ? m[1]! : "(project)";
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${k} ${(v / 1024).toFixed(0)}K`)
    .join(", ");
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "cold-start-"));
  try {
    const naiveEntry = join(ROOT, "test/bench/.naive-entry.ts");
    writeFileSync(naiveEntry, NAIVE);
    const buildNaive = async (name: string, options: { minify: boolean; sourcemap: boolean }) => {
      // As CDK's NodejsFunction builds it: CommonJS, the SDK left to the runtime.
      const result = await build({
        ...esbuildBase,
        ...options,
        format: "cjs",
        external: ["@aws-sdk/*", "@duckdb/*"],
        entryPoints: [naiveEntry],
        outfile: join(dir, name, "index.js"),
      });
      return { file: join(dir, name, "index.js"), meta: result.metafile };
    };
    type Naive = Awaited<ReturnType<typeof buildNaive>>;
    let cdkDefault: Naive, minified: Naive, withMaps: Naive;
    try {
      // The goal's naive bundle: NodejsFunction's defaults (minify and sourceMap both off).
      cdkDefault = await buildNaive("naive-cdk", { minify: false, sourcemap: false });
      // The same minified, as the stack's own build is: issue 30's `before` figures used this one.
      minified = await buildNaive("naive-min", { minify: true, sourcemap: false });
      // Source maps on and --enable-source-maps, as a naive deployment often runs (the option
      // NodejsFunction documents beside sourceMap); the stack's functions run without it
      // (shared/source-maps.ts resolves stack traces when one is printed instead).
      withMaps = await buildNaive("naive-maps", { minify: true, sourcemap: true });
    } finally {
      rmSync(naiveEntry, { force: true });
    }
    const subject = (name: string, file: string, nodeOptions: string[]): Subject => ({
      name,
      file,
      initFiles: [file],
      nodeOptions,
      init: [],
      total: [],
      beside: [],
    });
    const naive = subject("naive (whole-package imports), CDK's default build", cdkDefault.file, []);
    const naiveMin = subject("naive, minified", minified.file, []);
    const naiveMaps = subject("naive, minified, --enable-source-maps", withMaps.file, ["--enable-source-maps"]);
    const built: { s: Subject; meta: Metafile }[] = [];
    for (const fn of FUNCTIONS) {
      const outdir = join(dir, fn);
      const native = MANIFEST.find((f) => f.name === fn)?.native;
      const meta = await bundleFunction({
        entry: join(ROOT, "functions", `${fn}.ts`),
        outdir,
        ...(native ? { native } : {}),
      });
      const s = subject(fn, join(outdir, "index.mjs"), []);
      s.initFiles = (await firstRequestLoads(outdir)).init;
      built.push({ s, meta });
    }
    measurePaired(naive, [naiveMin, naiveMaps, ...built.map((b) => b.s)]);
    const baseMin = median(naiveMin.init);
    const row = (s: Subject, meta: Metafile) => {
      // Every output file (the entry and its chunks); the naive bundle's SDK is the runtime's, not counted.
      const kb = codeKB(s.file);
      const init = median(s.init);
      const total = median(s.total);
      return {
        bundle: s.name,
        "size KB": kb.toFixed(0),
        "size / naive minified": (kb / codeKB(minified.file)).toFixed(2),
        "init KB (compiled at init)": (s.initFiles.reduce((n, f) => n + statSync(f).size, 0) / 1024).toFixed(0),
        "init ms (median)": init.toFixed(1),
        "init / naive": pairedRatio(s.init, s.beside).toFixed(2),
        "first request loads ms": total - init > 0.05 ? (total - init).toFixed(1) : "-",
        // The goal's figure: against the naive bundle as CDK builds it by default.
        "init + loads / naive": pairedRatio(s.total, s.beside).toFixed(2),
        "previous (6ad531a)": PREVIOUS[s.name] ?? "",
        "… / naive minified": (total / baseMin).toFixed(2),
        "before (issue 30), / naive minified": BEFORE[s.name] ?? "",
        "goal (API functions)": MANIFEST.find((f) => f.name === s.name)?.kind === "api" ? "≤ 0.50" : "",
        "largest parts": biggest(meta),
      };
    };
    printTable(
      "cold start: bundles as the stack builds them (infra/aws/bundle), required as Lambda runs them, each beside a naive start",
      [
        row(naive, cdkDefault.meta),
        row(naiveMin, minified.meta),
        row(naiveMaps, withMaps.meta),
        ...built.map((b) => row(b.s, b.meta)),
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
