import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { buildPlayground } from "../support/playground-build";

const ROOT = resolve(import.meta.dirname, "../..");

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
  }
}

/**
 * Builds the playground from its source, then starts the local stack as `npm start` runs it
 * (tsx infra/local/main.ts) on a free port with a fresh data directory, and hands its URL to the
 * tests. Everything is stopped and the directory removed at the end.
 */
export default async function setup(project: TestProject) {
  await buildPlayground();

  const dataDir = mkdtempSync(join(tmpdir(), "playground-browser-"));
  const child = spawn(process.execPath, [join(ROOT, "node_modules/tsx/dist/cli.mjs"), "infra/local/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      DATA_DIR: dataDir,
      LOG_LEVEL: "WARN",
      // Slow enough that a test can see an answer arrive in parts, as Bedrock's would.
      OFFLINE_STREAM_DELAY_MS: "25",
      // Quotas set, far above what a test uses: with none the stack counts no turns, and the Account
      // panel would have nothing to show. Tokens per day are left unset (shown as "no limit"), and a
      // project has limits of its own (its own row).
      USER_QUOTAS: JSON.stringify({ turnsPerMinute: 1000, projects: { metered: { tokensPerDay: 10_000_000 } } }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The stack's last words, shown if it dies under the tests: otherwise every test after that fails
  // with a refused connection and nothing says why.
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping) console.error(`the local stack exited (${code ?? signal}) during the tests; its output:\n${tail}`);
  });
  const baseUrl = await readyUrl(child);
  project.provide("baseUrl", baseUrl);

  return async () => {
    stopping = true;
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once("exit", r)));
    rmSync(dataDir, { recursive: true, force: true });
  };
}

/** The stack prints "http: … on http://localhost:<port>" and then "ready:" once it serves. */
function readyUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolveUrl, reject) => {
    let out = "";
    let url: string | undefined;
    const timer = setTimeout(() => reject(new Error(`the local stack did not start in 90 s:\n${out}`)), 90_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      url ??= /API Gateway stand-in on (http:\/\/localhost:\d+)/.exec(out)?.[1];
      if (url && out.includes("ready:")) {
        clearTimeout(timer);
        resolveUrl(url);
      }
    };
    child.stdout!.on("data", onData);
    // Warnings and errors go on being drained, so a full pipe never blocks the stack.
    child.stderr!.on("data", (chunk: Buffer) => {
      if (!url) out += chunk.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the local stack exited with ${code} before it was ready:\n${out}`));
    });
  });
}
