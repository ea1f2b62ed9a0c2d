import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { QueuePublisher } from "../../shared/queue";
import { AgentCrons } from "../../shared/stores/agent-crons";
import { AgentRuns } from "../../shared/stores/agent-runs";
import type { LocalCronScheduler } from "./cron-scheduler";

/**
 * What a restarted local stack takes up again from its data folder. Its queues and cron timers
 * live in the process (in AWS, SQS keeps the messages and EventBridge Scheduler the schedules), so
 * a restart lost them: a background run waiting its turn stayed pending for good, its thread
 * refusing runs, and every cron stopped firing while it still listed as enabled. Each pending
 * run's message is sent again (when it is due, for one made with after_seconds), and each cron
 * scheduled again. A message sent twice is harmless: the worker claims a run once.
 */
export async function restoreQueuedWork(
  dynamo: DynamoDBClient,
  table: string,
  { crons, runsQueue }: { crons: LocalCronScheduler; runsQueue: QueuePublisher },
): Promise<{ runs: number; crons: number }> {
  const [pending, stored] = await Promise.all([
    new AgentRuns(dynamo, table).pendingEverywhere(),
    new AgentCrons(dynamo, table).everyUsers(),
  ]);
  for (const run of pending) {
    const due = Date.parse(run.createdAt) + Number(run.kwargs?.after_seconds ?? 0) * 1000;
    const delaySeconds = Math.max(0, Math.ceil((due - Date.now()) / 1000));
    await runsQueue.publish({ thread_id: run.threadId, run_id: run.runId }, delaySeconds ? { delaySeconds } : {});
  }
  for (const cron of stored) await crons.put(cron);
  return { runs: pending.length, crons: stored.length };
}
