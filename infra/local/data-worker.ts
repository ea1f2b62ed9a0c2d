import { Piscina } from "piscina";
import { engineClient, type DataEngine, type EngineAnswer } from "../../shared/files/data-engine";
import { SqlBusy, SqlError } from "../../shared/files/sql-errors";

export type ClosableEngine = DataEngine & { close(): Promise<void> };

/**
 * The data function's stand-in for the local stack: DuckDB on worker threads of its own (Piscina),
 * as in AWS it runs in a function of its own. There the API, the queues and PGlite share one
 * process: DuckDB's results are converted on the worker, not the event loop, and at most
 * `threads` queries run at once, so DuckDB holds at most that many of libuv's four threads (shared
 * by the process's workers) and files, DNS and zlib keep the rest. A request that waits in the
 * queue is busy past `maxQueue`; one still running `hardLimitMs` after it was sent (DuckDB's
 * interrupt did not stop it) ends with its thread, and the pool starts a fresh one.
 */
export function workerDataEngine({
  dir,
  threads = 2,
  maxQueue = 8,
  memoryMb = 512,
}: {
  /** the local attachments folder the objects' keys are under */
  dir: string;
  threads?: number;
  maxQueue?: number;
  memoryMb?: number;
}): ClosableEngine {
  const pool = new Piscina({
    filename: new URL("./data-task.ts", import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    maxQueue,
    idleTimeout: 60_000,
    // The task is TypeScript: under `npm start` tsx is already loaded; elsewhere (tests) load it.
    execArgv: process.execArgv.some((a) => a.includes("tsx"))
      ? process.execArgv
      : [...process.execArgv, "--import", "tsx"],
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
  });
  const engine = engineClient(async (request): Promise<EngineAnswer> => {
    // Loading, then the statement, each within timeoutMs, and the wait for a thread: past that, stop.
    const hardLimitMs = request.limits.timeoutMs * 3 + 1_000;
    const signal = AbortSignal.timeout(hardLimitMs);
    try {
      return (await pool.run({ request, dir }, { signal })) as EngineAnswer;
    } catch (err) {
      if (signal.aborted) throw new SqlError(`the request was stopped after ${hardLimitMs} ms`);
      if (/queue is at limit/i.test(String((err as Error).message))) throw new SqlBusy();
      if ((err as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY")
        throw new SqlError(`the request ran out of the data engine's ${memoryMb} MB of memory`);
      throw err;
    }
  });
  return Object.assign(engine, { close: () => pool.destroy() });
}
