import { build, type Metafile } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bundleFunction, esbuildBase } from "../../infra/aws/bundle/build";
import { FUNCTIONS as MANIFEST } from "../../infra/manifest";
import { median, printTable } from "./table";

/**
 * Cold start: each function's bundle built by the stack's own build (infra/aws/bundle), against
 * a naive bundle that imports whole packages (LangGraph, @langchain/aws, the DynamoDB, SQS and
 * Supabase clients) built with the same esbuild options and no trims. For each: the size, the
 * median time to require() it in a fresh Node process run as Lambda runs it (source maps on),
 * and what the first request then loads (the modules a handler defers, shared/deferred.ts).
 */
const ROOT = resolve(import.meta.dirname, "../..");
const FUNCTIONS = process.env.BENCH_FUNCTIONS ? process.env.BENCH_FUNCTIONS.split(",") : MANIFEST.map((f) => f.name); // every function of the deployment manifest
const RUNS = 11;

const NAIVE = `
import * as langgraph from "@langchain/langgraph";
import * as aws from "@langchain/aws";
import * as dynamodb from "@aws-sdk/client-dynamodb";
import * as sqs from "@aws-sdk/client-sqs";
import * as supabase from "@supabase/supabase-js";
export const handler = async () => [langgraph, aws, dynamodb, sqs, supabase].length;
`;

/** Medians over fresh processes: require() of the bundle, then its deferred imports (if any). */
function coldStartMs(file: string): { init: number; deferred: number } {
  const init: number[] = [];
  const deferred: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(
      process.execPath,
      [
        "--enable-source-maps",
        "-e",
        // The runtime's awslambda global, which the streaming handler calls as it loads.
        `globalThis.awslambda={streamifyResponse:(f)=>f,HttpResponseStream:{from:(s)=>s}};` +
          `const t0=process.hrtime.bigint();const m=require(${JSON.stringify(file)});const t1=process.hrtime.bigint();` +
          `Promise.resolve(m.loadDeferred?.()).then(()=>process.stdout.write(JSON.stringify([Number(t1-t0)/1e6,m.loadDeferred?Number(process.hrtime.bigint()-t1)/1e6:0])))`,
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
    const [a, b] = JSON.parse(out.toString()) as [number, number];
    init.push(a);
    deferred.push(b);
  }
  return { init: median(init), deferred: median(deferred) };
}

/** The largest inputs of a bundle, by bytes they contribute: where to cut next. */
function biggest(meta: Metafile, n = 4): string {
  const output = Object.values(meta.outputs).find((o) => o.entryPoint)!;
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
    const naiveEntry = join(ROOT, "test/bench/.naive-entry.ts");
    writeFileSync(naiveEntry, NAIVE);
    let naiveMeta: Metafile;
    try {
      const result = await build({
        ...esbuildBase,
        entryPoints: [naiveEntry],
        outfile: join(dir, "naive", "index.js"),
      });
      naiveMeta = result.metafile;
    } finally {
      rmSync(naiveEntry, { force: true });
    }
    const measure = (name: string, outdir: string, meta: Metafile) => {
      const file = join(outdir, "index.js");
      return { name, kb: statSync(file).size / 1024, ...coldStartMs(file), top: biggest(meta) };
    };
    const naive = measure("naive (whole-package imports)", join(dir, "naive"), naiveMeta);
    const rows = [naive];
    for (const fn of FUNCTIONS) {
      const outdir = join(dir, fn);
      rows.push(measure(fn, outdir, await bundleFunction({ entry: join(ROOT, "functions", `${fn}.ts`), outdir })));
    }
    printTable(
      "cold start: bundles as the stack builds them (infra/aws/bundle), required as Lambda runs them (--enable-source-maps)",
      rows.map((m) => ({
        bundle: m.name,
        "size KB": m.kb.toFixed(0),
        "size / naive": (m.kb / naive.kb).toFixed(2),
        [`init ms (require, median of ${RUNS})`]: m.init.toFixed(1),
        "init / naive": (m.init / naive.init).toFixed(2),
        "first request loads ms": m.deferred > 0 ? m.deferred.toFixed(1) : "-",
        "init + loads / naive": ((m.init + m.deferred) / naive.init).toFixed(2),
        "largest parts": m.top,
      })),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
