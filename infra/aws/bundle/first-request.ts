import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

/** The files of a bundle its init imports, and those its first request then imports. */
export interface FirstRequestLoads {
  init: string[];
  firstRequest: string[];
}

/**
 * Which of a bundle's files a cold start loads: what importing its entry reads (init), and what
 * its `loadDeferred` then imports (shared/deferred.ts: what the first request that gets past the
 * handler's checks loads). Read by loading the bundle in a child process with a module hook, as
 * the cold-start bench and the bundle test do: the deferred loads are registered at run time, so
 * no static reading of the bundle can tell them from the modules only some requests import (S3's
 * client, the data function's, the SDK's credential providers).
 */
export async function firstRequestLoads(bundleDir: string): Promise<FirstRequestLoads> {
  // The real path: Node's loader names files by theirs (a temporary folder may be a link).
  const outdir = realpathSync(resolve(bundleDir));
  // Written synchronously: the hook runs on the loader's thread, whose asynchronous writes the
  // child's exit can cut short.
  const hook = `import { writeSync } from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:")) writeSync(2, "load " + url + "\\n");
  return next(url, context);
}`;
  const register = `data:text/javascript,${encodeURIComponent(
    `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`,
  )}`;
  // The runtime's awslambda global, which a streaming handler calls as it loads.
  const script = `globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
const m = await import(${JSON.stringify(join(outdir, "index.mjs"))});
process.stderr.write("first-request\\n");
if (m.loadDeferred) await m.loadDeferred();
// Done: a handle the bundle opened as it loaded would otherwise keep this process to the timeout.
process.exit(0);`;
  const run = promisify(execFile)(process.execPath, ["--import", register, "--input-type=module", "-e", script], {
    cwd: outdir,
    timeout: 60_000,
    // Nothing from this machine's environment: the bundle loads as it would in Lambda.
    env: { PATH: process.env.PATH, AWS_REGION: "us-east-1", LOG_LEVEL: "SILENT" },
  });
  const { stderr } = await run.catch((err: { stderr?: string; message: string }) => {
    // The loads the hook printed are noise here: the bundle's own error is last.
    const said = (err.stderr ?? err.message).split("\n").filter((line) => line && !line.startsWith("load "));
    throw new Error(`${outdir}/index.mjs failed to load for its cold start's files:\n${said.slice(-12).join("\n")}`);
  });
  const loads: FirstRequestLoads = { init: [], firstRequest: [] };
  let phase: keyof FirstRequestLoads = "init";
  for (const line of stderr.split("\n")) {
    if (line === "first-request") phase = "firstRequest";
    else if (line.startsWith("load file://")) {
      const path = decodeURIComponent(new URL(line.slice("load ".length)).pathname);
      if (path.startsWith(outdir) && !loads.init.includes(path)) loads[phase].push(path);
    }
  }
  return loads;
}
