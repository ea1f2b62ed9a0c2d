import { makeIdempotent } from "@aws-lambda-powertools/idempotency";
import type { SQSRecord } from "aws-lambda";
import { SupportMessage } from "../shared/intercom/support-message";
import { buildSupportRuntime, type SupportRuntime } from "../graph/support/runtime";
import { awsWiring, type Wiring } from "../shared/wiring";
import { runDeadline } from "../shared/deadline";
import { once } from "../shared/once";
import { parseRecord, sqsConsumer } from "../shared/sqs-batch";
import { createLogger } from "../shared/logger";
import { createMetrics } from "../shared/metrics";

const logger = createLogger("support-worker");
const metrics = createMetrics("support-worker");

/**
 * SQS consumer: runs the support graph for one customer part per message, on the
 * conversation's thread (`intercom:<conversation_id>`). One run per conversation at a time
 * (the session lease; a busy conversation's message is retried later), idempotent per part
 * (Powertools idempotency), and a part is answered at most once (claimed before replying).
 */
export function createSupportWorker(runtime: () => Promise<SupportRuntime>) {
  return sqsConsumer({
    metrics,
    logger,
    // Sequential: two parts of one conversation in a batch must not run at once (the second
    // would find the lease taken and be retried minutes later), and order matters to the customer.
    processing: "sequential",
    runtime,
    forBatch: (rt, context) => {
      rt.idempotency.config.registerLambdaContext(context);
      const deadline = runDeadline(context);
      // Idempotent per part (Powertools): a redelivered message returns the first outcome.
      const answer = makeIdempotent((m: SupportMessage) => rt.support.answer(m, deadline), rt.idempotency);
      return async (record: SQSRecord) => {
        const message = parseRecord(record, (body) => SupportMessage.parse(JSON.parse(body)), "invalid message");
        const outcome = await answer(message);
        logger.info("conversation handled", {
          messageId: record.messageId,
          conversationId: message.conversation_id,
          partId: message.part_id,
          outcome,
        });
      };
    },
  });
}

/** The handler on any wiring: Lambda's below, or the local stack's (Intercom's stand-in). */
export const createHandler = ({ backends }: Wiring) =>
  createSupportWorker(
    once(async () => {
      const b = await backends();
      return buildSupportRuntime(b, b.intercomFetch);
    }),
  );

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
