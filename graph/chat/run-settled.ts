import { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/**
 * When a graph run has really ended. A stream given an abort signal rejects at once (@langchain/core
 * races each chunk with the signal), while the run goes on: its nodes stop, then LangGraph writes
 * the exit checkpoint (durability "exit" writes one on error too) and awaits its writes. Only then
 * does the root run report its end or error to the callbacks. A turn that failed waits for that
 * before it takes itself back out of the state or lets its lease go: otherwise the late checkpoint
 * lands after the undo (the turn comes back into the state, not into the transcript) or after the
 * next run began (two checkpoints on one parent).
 */
export function graphRunSettled() {
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const handler = BaseCallbackHandler.fromMethods({
    handleChainEnd: (_outputs, _runId, parentRunId) => {
      if (parentRunId === undefined) settle();
    },
    handleChainError: (_error, _runId, parentRunId) => {
      if (parentRunId === undefined) settle();
    },
  });
  return {
    handler,
    /** Resolves when the run settled, or after `maxMs` (a run whose writes hang must not hold the turn forever). */
    wait(maxMs: number): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
        timer.unref();
      });
      return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
    },
  };
}
