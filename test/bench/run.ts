// Benchmarks print tables; tests assert behaviour. `npm run bench -- <name>` runs one.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
// No CloudWatch locally: metrics stay off unless asked for.
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";
process.env.LOG_LEVEL ??= "SILENT";

const benches: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  checkpoint: () => import("./checkpoint"),
  retrieval: () => import("./retrieval"),
  "memory-scale": () => import("./memory-scale"),
  extraction: () => import("./extraction"),
  ingest: () => import("./ingest"),
  "hostile-documents": () => import("./hostile-documents"),
  "cold-start": () => import("./cold-start"),
  "data-files": () => import("./data-files"),
  "long-conversation": () => import("./long-conversation"),
  "turn-overhead": () => import("./turn-overhead"),
  "background-runs": () => import("./background-runs"),
  "playground-load": () => import("./playground-load"),
  soak: () => import("./soak"),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in benches));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")}; known: ${Object.keys(benches).join(", ")}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(benches)) {
  console.log(`\n## bench: ${name}`);
  await (await benches[name]!()).run();
}
export {};
