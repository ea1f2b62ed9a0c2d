import { Piscina } from "piscina";
import { OverLimit, TimedOut, timedOut } from "../../shared/documents/limits";
import type { DocumentProcessor } from "../../shared/documents/process";
import { SkipDocument } from "../../shared/documents/skip";
import type { TaskResult } from "./document-task";

export type ClosableProcessor = DocumentProcessor & { close(): Promise<void> };

/**
 * Extraction and chunking on a worker thread (Piscina, one thread), for the local stack: there
 * the API, the queues and PGlite share one process, and a large document's synchronous parsing
 * (an HTML conversion, a DOCX's XML) would stall every request. The worker also bounds what
 * Lambda bounds by its own limits: a document past its deadline is stopped by terminating the
 * thread, and one that outgrows `memoryMb` of heap ends the thread, not the stack. Both are
 * skipped with the reason; the pool starts a fresh thread for the next document.
 */
export function workerDocumentProcessor({ memoryMb = 1024 }: { memoryMb?: number } = {}): ClosableProcessor {
  const pool = new Piscina({
    filename: new URL("./document-task.ts", import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 60_000,
    // The task is TypeScript: under `npm start` tsx is already loaded; elsewhere (tests) load it.
    execArgv: process.execArgv.some((a) => a.includes("tsx"))
      ? process.execArgv
      : [...process.execArgv, "--import", "tsx"],
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
  });
  const processor: DocumentProcessor = async (request) => {
    const signal = AbortSignal.timeout(Math.max(1, request.limits.deadline - Date.now()));
    let result: TaskResult;
    try {
      result = (await pool.run(request, { signal })) as TaskResult;
    } catch (err) {
      if (signal.aborted) throw timedOut(request.limits);
      if ((err as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY")
        throw new OverLimit(`processing ran out of the worker's ${memoryMb} MB of memory`);
      throw err;
    }
    if ("skip" in result) {
      const Skip = { "timed-out": TimedOut, "over-limit": OverLimit, unreadable: SkipDocument }[result.kind];
      throw new Skip(result.skip);
    }
    return result.chunks;
  };
  return Object.assign(processor, { close: () => pool.destroy() });
}
