import { type AgentRuns, LIVE, type RunRecord } from "../../shared/stores/agent-runs";
import type { RunEvent, RunEventLog } from "../../shared/stores/run-events";
import { runAsItStands } from "./background";
import type { RunDeps } from "./runs";
import type { ThreadService } from "./threads";

/**
 * joinStream: a run's events after `afterId`, then live until it ends. A run whose events were
 * kept (background, or streamed with `stream_resumable`) replays from its log; one that was not
 * has no log to read, so its join only waits for it to end. The run is the caller's, read (and
 * its thread's ownership checked) before this is called, so a join's response can begin before
 * a run that waits its turn has any event.
 */
export async function* joinRun(
  deps: { runs: AgentRuns; events: RunEventLog; threads: ThreadService; runDeps: RunDeps },
  run: RunRecord,
  afterId: number,
  signal?: AbortSignal,
): AsyncGenerator<RunEvent> {
  const { threadId, runId } = run;
  // Over, and nothing kept: nothing to replay or wait for.
  if (!LIVE.has(run.status) && !(await deps.events.exists(runId))) return;
  const stillRunning = async () => {
    const now = await deps.runs.get(threadId, runId);
    return now !== undefined && LIVE.has((await runAsItStands(deps, now)).status);
  };
  let last = afterId;
  let failed = false;
  for await (const event of deps.events.follow(runId, afterId, { signal, stillRunning })) {
    last = event.id;
    failed ||= event.event === "error";
    yield event;
  }
  if (failed || signal?.aborted) return;
  // A run that failed without writing so (its worker lost: a crash, a timeout) ends with the error
  // its record says, as a stream of it would have, under the next id: a client that asks again
  // after it gets nothing more.
  // As it stands: a log closed by a worker that then died leaves the record running, lost.
  const read = await deps.runs.get(threadId, runId);
  const ended = read && (await runAsItStands(deps, read));
  if (ended?.status === "error" && ended.error)
    yield {
      id: last + 1,
      event: "error",
      data: { error: (ended.error as { error?: string }).error ?? ended.error.code, message: ended.error.message },
    };
}

/** One server-sent event as the Agent Server API frames it, with its id when it has one. */
export function sseFrame(name: string, data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
