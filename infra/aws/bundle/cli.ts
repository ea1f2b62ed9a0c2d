// `node --import tsx infra/aws/bundle/cli.ts <entry> <outdir> [--langsmith] [--native=duckdb]`: the stack's
// bundling step (code.ts). A separate process because CDK's local bundling hook is synchronous
// and esbuild runs plugins only in its asynchronous API.
import { bundleFunction } from "./build";

const [entry, outdir, ...flags] = process.argv.slice(2);
if (!entry || !outdir) {
  console.error("usage: cli.ts <entry> <outdir> [--langsmith]");
  process.exit(2);
}
const native = flags.find((f) => f.startsWith("--native="))?.slice("--native=".length);
if (native !== undefined && native !== "duckdb") {
  console.error(`unknown native module ${native}`);
  process.exit(2);
}
await bundleFunction({ entry, outdir, langsmith: flags.includes("--langsmith"), ...(native ? { native } : {}) });
