import { build, type BuildOptions, type Metafile } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median, printTable } from "./table";

/**
 * Cold start: each function's bundle built as CDK's NodejsFunction builds it (esbuild, minified,
 * node22, CommonJS, `@aws-sdk/*` left to the runtime), against a naive bundle that imports whole
 * packages (LangGraph, @langchain/aws, the DynamoDB, SQS and Supabase clients). For each: the
 * size, and the median time to require() it in a fresh Node process (10 processes).
 */
const ROOT = resolve(import.meta.dirname, "../..");
const FUNCTIONS = process.env.BENCH_FUNCTIONS
  ? process.env.BENCH_FUNCTIONS.split(",")
  : [
      "chat",
      "chat-stream",
      "sessions",
      "memories",
      "memory-extraction",
      "ingest",
      "intercom-webhook",
      "support-worker",
      "authorizer",
    ];
const RUNS = 10;

/** The options aws-cdk-lib's NodejsFunction passes to esbuild for this stack's functions. */
const cdkOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  minify: true,
  sourcemap: false,
  platform: "node",
  target: "node22",
  format: "cjs",
  external: ["@aws-sdk/*"],
  metafile: true,
  logLevel: "silent",
});

const NAIVE = `
import * as langgraph from "@langchain/langgraph";
import * as aws from "@langchain/aws";
import * as dynamodb from "@aws-sdk/client-dynamodb";
import * as sqs from "@aws-sdk/client-sqs";
import * as supabase from "@supabase/supabase-js";
export const handler = async () => [langgraph, aws, dynamodb, sqs, supabase].length;
`;

function requireMs(file: string): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(
      process.execPath,
      [
        "-e",
        // The runtime's awslambda global, which the streaming handler calls as it loads.
        `globalThis.awslambda={streamifyResponse:(f)=>f,HttpResponseStream:{from:(s)=>s}};` +
          `const t=process.hrtime.bigint();require(${JSON.stringify(file)});process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`,
      ],
      // The runtime provides @aws-sdk/*: here it resolves from the project's node_modules.
      {
        env: {
          ...process.env,
          NODE_PATH: join(ROOT, "node_modules"),
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
          AWS_REGION: "us-east-1",
        },
      },
    );
    times.push(Number(out.toString()));
  }
  return median(times);
}

/** The largest inputs of a bundle, by bytes they contribute: where to cut next. */
function biggest(meta: Metafile, n = 4): string {
  const output = Object.values(meta.outputs)[0]!;
  const byPackage = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m ? m[1]! : "(project)";
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
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
    const rows = [];
    const naiveEntry = join(ROOT, "test/bench/.naive-entry.ts");
    writeFileSync(naiveEntry, NAIVE);
    const measure = async (name: string, entry: string) => {
      const outfile = join(dir, `${name}.js`);
      const result = await build(cdkOptions(entry, outfile));
      return { name, kb: statSync(outfile).size / 1024, ms: requireMs(outfile), top: biggest(result.metafile!) };
    };
    let naive;
    try {
      naive = await measure("naive (whole-package imports)", naiveEntry);
    } finally {
      rmSync(naiveEntry, { force: true });
    }
    for (const fn of FUNCTIONS) {
      const m = await measure(fn, join(ROOT, "functions", `${fn}.ts`));
      rows.push({
        bundle: m.name,
        "size KB": m.kb.toFixed(0),
        "size / naive": (m.kb / naive.kb).toFixed(2),
        "require ms (median of 10)": m.ms.toFixed(1),
        "init / naive": (m.ms / naive.ms).toFixed(2),
        "largest parts": m.top,
      });
    }
    rows.unshift({
      bundle: naive.name,
      "size KB": naive.kb.toFixed(0),
      "size / naive": "1.00",
      "require ms (median of 10)": naive.ms.toFixed(1),
      "init / naive": "1.00",
      "largest parts": naive.top,
    });
    printTable("cold start: bundles as CDK builds them (esbuild, minified, node22, @aws-sdk external)", rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
