import { existsSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { Worker } from "node:worker_threads";
import { runEngineRequest } from "../../shared/files/data-core";
import type { EngineAnswer, EngineRequest } from "../../shared/files/data-engine";

/**
 * The process ends past the data function's memory (DATA_ENGINE_MEMORY_MB, set by data-worker.ts),
 * as Lambda ends a function past its own. DuckDB keeps some values outside its memory limit (a
 * Parquet file's one 100 MB string referenced by each row), which only the process's size shows,
 * and the conversion of such values to JavaScript holds the main thread: the watch runs on a
 * thread of its own. Hand-written: nothing in Node caps a process's resident memory, and a cgroup
 * needs root.
 */
const memoryLimit = Number(process.env.DATA_ENGINE_MEMORY_MB ?? 0) * 2 ** 20;
if (memoryLimit > 0)
  new Worker(
    `const { workerData } = require("node:worker_threads");
     setInterval(() => { if (process.memoryUsage.rss() > workerData) process.kill(process.pid, "SIGKILL"); }, 20);`,
    { eval: true, workerData: memoryLimit },
  ).unref();

/**
 * One data engine request on a worker of the local pool (data-worker.ts), reading objects from the
 * local attachments folder as the data function reads them from the bucket.
 */
export default async function dataTask({
  request,
  dir,
}: {
  request: EngineRequest;
  dir: string;
}): Promise<EngineAnswer> {
  const root = resolve(dir);
  return runEngineRequest(request, async (key) => {
    const path = resolve(join(root, key));
    // A key is the server's own (shared/files/keys.ts); still, never read outside the folder.
    if (!path.startsWith(root + sep) || !existsSync(path)) return undefined;
    return new Uint8Array(readFileSync(path));
  });
}
