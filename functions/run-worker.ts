import type { SQSRecord } from "aws-lambda";
import * as z from "../shared/zod";
import { RunMessage, runQueued } from "../graph/agent-server/background";
import { CronFiringMessage, fireCron } from "../graph/agent-server/crons";
import { type AgentServer, deferredAgentServer } from "../graph/agent-server/runtime";
import { runDeadline } from "../shared/deadline";
import { createLogger } from "../shared/logger";
import { createMetrics, MetricUnit } from "../shared/metrics";
import { parseRecord, sqsConsumer } from "../shared/sqs-batch";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("run-worker");

/** A background run to start (runs.create), or a cron's firing (EventBridge Scheduler, or the local timer). */
const WorkerMessage = z.union([z.strictObject(RunMessage.shape), z.strictObject(CronFiringMessage.shape)]);
const metrics = createMetrics("run-worker");

/**
 * SQS consumer: the Agent Server API's background runs (runs.create), one per message, each
 * claimed on its record before it runs, so a redelivered message runs nothing twice, and its
 * events written to the run's log for join and joinStream (graph/agent-server/background.ts).
 * A malformed message fails each receive until it is dead-lettered, with its reason logged.
 */
export function createRunWorker(server: () => Promise<AgentServer>) {
  return sqsConsumer({
    metrics,
    logger,
    // Runs of one thread wait for each other (its lease): one at a time, in arrival order.
    processing: "sequential",
    runtime: server,
    forBatch: (ready, context) => async (record: SQSRecord) => {
      const message = parseRecord(record, (body) => WorkerMessage.parse(JSON.parse(body)), "invalid message");
      const deadline = runDeadline(context);
      const redelivered = Number(record.attributes?.ApproximateReceiveCount ?? 1) > 1;
      if ("cron_id" in message) {
        await fireCron(ready, message, { deadline, deliveryId: record.messageId, redelivered, logger });
        metrics.addMetric("CronFirings", MetricUnit.Count, 1);
        logger.info("cron fired", { messageId: record.messageId, cronId: message.cron_id });
        return;
      }
      await runQueued(ready, message, { redelivered, deadline });
      metrics.addMetric("RunMessagesHandled", MetricUnit.Count, 1);
      logger.info("run handled", { messageId: record.messageId, threadId: message.thread_id, runId: message.run_id });
    },
  });
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ backends }: Wiring) => createRunWorker(deferredAgentServer(logger, backends));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
