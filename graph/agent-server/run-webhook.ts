import type { QueuePublisher } from "../../shared/queue";
import { runJson } from "../../shared/stores/agent-json";
import type { AgentRuns, RunRecord } from "../../shared/stores/agent-runs";
import type { WebhookMessage } from "../../shared/webhooks";

export interface WebhookDeps {
  /** the webhook sender's queue; absent, the deployment sends none */
  webhooks?: QueuePublisher;
  onServerError?: (error: unknown) => void;
}

/**
 * A run that ended, to its webhook through the sender's queue (retried there with backoff), as
 * LangGraph's servers post it. Every way a run with a webhook ends posts it: it ran, it was refused
 * when its turn came, or it was withdrawn while it waited. A failure to publish is reported, and
 * never fails the run.
 */
export async function notifyRunEnded(
  deps: WebhookDeps,
  webhook: unknown,
  run: RunRecord,
  { values = null, startedAt = run.createdAt, error }: { values?: unknown; startedAt?: string; error?: string } = {},
): Promise<void> {
  if (typeof webhook !== "string" || !deps.webhooks) return;
  const message: WebhookMessage = {
    url: webhook,
    attempt: 1,
    payload: {
      ...runJson(run),
      run_started_at: startedAt,
      run_ended_at: run.updatedAt,
      values,
      ...(error ? { error } : {}),
    },
  };
  await deps.webhooks.publish(message).catch((err: unknown) => deps.onServerError?.(err));
}

/**
 * Withdraws a run that has not begun (AgentRuns.withdraw): it never runs. One interrupted so posts
 * its webhook; a rollback deletes it, as LangGraph's servers delete a rolled-back run, and posts
 * none. False when it had begun or was over.
 */
export async function withdrawRun(
  deps: WebhookDeps & { runs: AgentRuns },
  run: RunRecord,
  action: "interrupt" | "rollback",
): Promise<boolean> {
  if (!(await deps.runs.withdraw(run.threadId, run.runId, action))) return false;
  if (action === "interrupt")
    await notifyRunEnded(deps, run.kwargs?.webhook, {
      ...run,
      status: "interrupted",
      updatedAt: new Date().toISOString(),
    });
  return true;
}
