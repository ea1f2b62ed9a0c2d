import Tinypool from "tinypool";
import { engineClient, type DataEngine, type EngineAnswer } from "../../shared/files/data-engine";
import { SqlBusy, SqlError } from "../../shared/files/sql-errors";
import { slots } from "../../shared/files/slots";
import { FUNCTIONS } from "../manifest";

/** The data function's memory in AWS (infra/manifest.ts), which each local process is held to. */
const DATA_FUNCTION_MB = FUNCTIONS.find((f) => f.name === "data")!.memoryMB;

export type ClosableEngine = DataEngine & { close(): Promise<void> };

/**
 * The data function's stand-in for the local stack: DuckDB in child processes of its own
 * (tinypool), as in AWS it runs in a function of its own. There the API, the queues and PGlite
 * share one process: DuckDB's work and its results' conversion happen elsewhere, and at most
 * `threads` requests run at once. A request is busy when `maxQueue` already wait, or when it waits
 * longer than its time limit; one still running `hardLimitMs` after it started (DuckDB's interrupt
 * did not stop it) ends with its process, and the pool starts a fresh one.
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
  memoryMb = DATA_FUNCTION_MB,
}: {
  /** the local attachments folder the objects' keys are under */
  dir: string;
  /** how many queries run at once, each in a process of its own */
  threads?: number;
  maxQueue?: number;
  /** each process's memory, as Lambda holds the data function to its own (JavaScript's heap: half, at most 512 MB) */
  memoryMb?: number;
}): ClosableEngine {
  const pool = new Tinypool({
    filename: new URL("./data-task.ts", import.meta.url).href,
    runtime: "child_process",
    minThreads: 0,
    maxThreads: threads,
    // Never more than `threads` at once (the slots below); room for those while processes start.
    maxQueue: threads,
    idleTimeout: 60_000,
    // tinypool gives a child only the environment it is handed.
    env: { ...(process.env as Record<string, string>), DATA_ENGINE_MEMORY_MB: String(memoryMb) },
    // The task is TypeScript: under `npm start` tsx is already loaded; elsewhere (tests) load it.
    execArgv: [
      ...(process.execArgv.some((a) => a.includes("tsx"))
        ? process.execArgv
        : [...process.execArgv, "--import", "tsx"]),
      `--max-old-space-size=${Math.min(512, Math.floor(memoryMb / 2))}`,
    ],
  });
  // A process that dies while idle is reported on the pool; one that dies during a task fails it.
  pool.on("error", () => undefined);
  // At most `threads` requests are handed to the pool at once, so each starts at once: the hard
  // limit then counts a request's running time only. Counted from the call, it stopped a request
  // that had waited behind others' runaway queries, and the stop read as the request's fault (an
  // upload rejected for good). Waiting past the time limit is busy, for the caller to retry.
  const processes = slots(threads);
  const engine = engineClient(async (request): Promise<EngineAnswer> => {
    if (processes.waiting >= maxQueue) throw new SqlBusy();
    const release = await processes.take(request.limits.timeoutMs);
    // Loading, then the statement, each within timeoutMs: past that (and the process's start), stop.
    const hardLimitMs = request.limits.timeoutMs * 3 + 1_000;
    const signal = AbortSignal.timeout(hardLimitMs);
    try {
      return (await pool.run({ request, dir }, { signal })) as EngineAnswer;
    } catch (err) {
      if (signal.aborted) throw new SqlError(`the request was stopped after ${hardLimitMs} ms`);
      const message = String((err as Error).message);
      if (/queue is at limit/i.test(message)) throw new SqlBusy(); // not expected: the slots keep it under
      if (/exited unexpectedly/i.test(message))
        throw new SqlError(
          `the data engine's process ended during the request: it went over its ${memoryMb} MB of memory, or crashed`,
        );
      throw err;
    } finally {
      release();
    }
  });
  return Object.assign(engine, { close: () => pool.destroy() });
}
