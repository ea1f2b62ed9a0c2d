import { type RunRecord, WORKER_LOST } from "../../shared/stores/agent-runs";
import type { AgentRuns } from "../../shared/stores/agent-runs";
import { notifyRunEnded, type WebhookDeps } from "./run-webhook";

/**
 * Ends a run whose worker was lost (a crash, a timeout) as failed, and posts its webhook as any
 * ending does. Only from `running`: of the readers, redeliveries and next runs on its thread that
 * find it lost at once, or a worker that finished it meanwhile, one ends it, and only that one
 * posts. False when it was not this one. One place for every finder: a finder that wrote the
 * ending alone left the run without its webhook for good (no later reader posts it).
 */
export async function endLostRun(deps: WebhookDeps & { runs: AgentRuns }, run: RunRecord): Promise<boolean> {
  if (!(await deps.runs.finish(run.threadId, run.runId, "error", WORKER_LOST, { from: "running" }))) return false;
  const ended = { ...run, status: "error" as const, error: WORKER_LOST, updatedAt: new Date().toISOString() };
  await notifyRunEnded(deps, run.kwargs?.webhook, ended, {
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    error: WORKER_LOST.message,
  });
  return true;
}
