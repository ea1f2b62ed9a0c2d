import type { SQSRecord } from "aws-lambda";
import * as z from "../shared/zod";
import type { Backends } from "../shared/backends";
import { createLogger } from "../shared/logger";
import { createMetrics, MetricUnit } from "../shared/metrics";
import { parseRecord, sqsConsumer } from "../shared/sqs-batch";
import {
  parseWebhookHosts,
  WEBHOOK_MAX_ATTEMPTS,
  webhookBackoffSeconds,
  webhookProblem,
  type WebhookMessage,
} from "../shared/webhooks";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("webhook-sender");
const metrics = createMetrics("webhook-sender");

const Message = z.object({
  url: z.string().check(z.minLength(1), z.maxLength(2048)),
  payload: z.record(z.string(), z.unknown()),
  attempt: z.number().check(z.int(), z.gte(1), z.lte(WEBHOOK_MAX_ATTEMPTS)),
});

/** How long one delivery may take before it counts as failed. */
const TIMEOUT_MS = 10_000;

/**
 * SQS consumer: a finished run's completion webhook, POSTed as LangGraph's servers post it (the run,
 * its values, `webhook_sent_at`). A failed delivery (no answer in 10 s, a non-2xx, a redirect, which
 * is never followed) is sent again later as a new message with a delay (5 s, 20 s, 80 s, 320 s);
 * after the last it fails until SQS dead-letters it. The host is checked again here against the
 * deployment's allow-list. At least once: a receiver may see a run twice, and tells by its run_id.
 */
export function createWebhookSender(
  backends: () => Promise<Pick<Backends, "config" | "webhooksQueue">>,
  send: typeof fetch = fetch,
) {
  return sqsConsumer({
    metrics,
    logger,
    processing: "parallel",
    runtime: backends,
    forBatch: ({ config, webhooksQueue }) => {
      const allowed = parseWebhookHosts(config.WEBHOOK_HOSTS);
      return async (record: SQSRecord) => {
        const message = parseRecord(record, (body) => Message.parse(JSON.parse(body)), "invalid message");
        const problem = webhookProblem(message.url, allowed);
        if (problem) {
          // The deployment's hosts changed since the run asked: not sent, and not retried.
          logger.warn("webhook not sent", { messageId: record.messageId, reason: problem });
          return;
        }
        // The last attempt is POSTed once: a redelivery of it is its failure coming back from the
        // queue on its way to the dead-letter queue, not another attempt.
        if (message.attempt >= WEBHOOK_MAX_ATTEMPTS && Number(record.attributes?.ApproximateReceiveCount ?? 1) > 1)
          throw new Error(`webhook failed after ${message.attempt} attempts; on its way to the dead-letter queue`);
        const failure = await deliver(send, message);
        if (!failure) {
          metrics.addMetric("WebhooksDelivered", MetricUnit.Count, 1);
          return;
        }
        metrics.addMetric("WebhookFailures", MetricUnit.Count, 1);
        if (message.attempt >= WEBHOOK_MAX_ATTEMPTS || !webhooksQueue)
          throw new Error(`webhook failed after ${message.attempt} attempts: ${failure}`);
        const next: WebhookMessage = { ...message, attempt: message.attempt + 1 };
        await webhooksQueue.publish(next, { delaySeconds: webhookBackoffSeconds(message.attempt) });
        logger.info("webhook failed; sent again later", {
          messageId: record.messageId,
          attempt: message.attempt,
          reason: failure,
        });
      };
    },
  });
}

/** One POST: undefined when the receiver took it (2xx), else why not. */
async function deliver(send: typeof fetch, message: z.infer<typeof Message>): Promise<string | undefined> {
  try {
    const response = await send(message.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "agent-backend-webhooks" },
      body: JSON.stringify({ ...message.payload, webhook_sent_at: new Date().toISOString() }),
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? undefined : `HTTP ${response.status}`;
  } catch (err) {
    return (err as Error).name === "TimeoutError" ? `no answer in ${TIMEOUT_MS / 1000} s` : (err as Error).message;
  }
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ backends }: Wiring) => createWebhookSender(backends);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
