import Tinypool from "tinypool";
import { engineClient, type DataEngine, type EngineAnswer } from "../../shared/files/data-engine";
import { SqlBusy, SqlError } from "../../shared/files/sql-errors";

export type ClosableEngine = DataEngine & { close(): Promise<void> };

/**
 * The data function's stand-in for the local stack: DuckDB in child processes of its own
 * (tinypool), as in AWS it runs in a function of its own. There the API, the queues and PGlite
 * share one process: DuckDB's work and its results' conversion happen elsewhere, and at most
 * `processes` queries run at once. A request that waits in the queue is busy past `maxQueue`; one
 * still running `hardLimitMs` after it was sent (DuckDB's interrupt did not stop it) ends with its
 * process, and the pool starts a fresh one.
 *
 * Processes, not worker threads: terminating a thread while DuckDB's native code runs in it aborts
 * the whole process ("terminate called after throwing an instance of 'Napi::Error'"), so a runaway
 * query stopped at the hard limit took the local stack, or a test worker, down with it. Killing a
 * child process stops only that query (test/infra/local/data-worker.integration.test.ts).
 */
export function workerDataEngine({
  dir,
  threads = 2,
  maxQueue = 8,
  memoryMb = 512,
}: {
  /** the local attachments folder the objects' keys are under */
  dir: string;
  /** how many queries run at once, each in a process of its own */
  threads?: number;
  maxQueue?: number;
  /** each process's JavaScript heap; DuckDB's own memory is capped by the request's limits */
  memoryMb?: number;
}): ClosableEngine {
  const pool = new Tinypool({
    filename: new URL("./data-task.ts", import.meta.url).href,
    runtime: "child_process",
    minThreads: 0,
    maxThreads: threads,
    maxQueue,
    idleTimeout: 60_000,
    // tinypool gives a child only the environment it is handed.
    env: process.env as Record<string, string>,
    // The task is TypeScript: under `npm start` tsx is already loaded; elsewhere (tests) load it.
    execArgv: [
      ...(process.execArgv.some((a) => a.includes("tsx"))
        ? process.execArgv
        : [...process.execArgv, "--import", "tsx"]),
      `--max-old-space-size=${memoryMb}`,
    ],
  });
  // A process that dies while idle is reported on the pool; one that dies during a task fails it.
  pool.on("error", () => undefined);
  const engine = engineClient(async (request): Promise<EngineAnswer> => {
    // Loading, then the statement, each within timeoutMs, and the wait for a thread: past that, stop.
    const hardLimitMs = request.limits.timeoutMs * 3 + 1_000;
    // Refused here, before tinypool sees it: tinypool attaches the signal's listener before its own
    // "queue is at limit" refusal and never removes it, so the time limit later fired it at a task
    // it never queued, and its assertion ended the process (the whole local stack).
    if (pool.queueSize >= maxQueue) throw new SqlBusy();
    const signal = AbortSignal.timeout(hardLimitMs);
    try {
      return (await pool.run({ request, dir }, { signal })) as EngineAnswer;
    } catch (err) {
      if (signal.aborted) throw new SqlError(`the request was stopped after ${hardLimitMs} ms`);
      const message = String((err as Error).message);
      if (/queue is at limit/i.test(message)) throw new SqlBusy();
      if (/exited unexpectedly/i.test(message))
        throw new SqlError(`the data engine's process ended during the request (out of its ${memoryMb} MB of memory?)`);
      throw err;
    }
  });
  return Object.assign(engine, { close: () => pool.destroy() });
}
