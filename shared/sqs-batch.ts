import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { Logger } from "./logger";
import { MetricUnit, type Metrics } from "./metrics";

/** Receives before SQS moves a message to its queue's dead-letter queue (every queue's redrive policy). */
export const MAX_RECEIVES = 3;

/**
 * SQS, not the consumer, moves a message to the dead-letter queue; but a consumer knows when a
 * record fails on its last allowed receive. Those are counted as `DeadLettered` (EMF) and logged
 * with their message ids, so on-call sees what went to the DLQ, and from which batch, without
 * reading the queue. Returns the response unchanged.
 */
export function recordDeadLetters(
  event: SQSEvent,
  response: SQSBatchResponse,
  { metrics, logger, maxReceives = MAX_RECEIVES }: { metrics: Metrics; logger: Logger; maxReceives?: number },
): SQSBatchResponse {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const lastTries = event.Records.filter(
    (r) => failed.has(r.messageId) && Number(r.attributes?.ApproximateReceiveCount) >= maxReceives,
  );
  if (lastTries.length > 0) {
    metrics.addMetric("DeadLettered", MetricUnit.Count, lastTries.length);
    logger.error("records failed their last receive: SQS moves them to the dead-letter queue", {
      messageIds: lastTries.map((r) => r.messageId),
    });
  }
  return response;
}

/**
 * How a consumer's records run within one batch. "parallel" is Powertools' default: every
 * record at once. "sequential" runs them in arrival order, one at a time, for consumers whose
 * records must not overlap (two messages of one conversation) or that should not multiply
 * their downstream load by the batch size.
 */
export type RecordProcessing = "parallel" | "sequential";

/**
 * One SQS batch the way every consumer here runs it: per-record failures reported back
 * (Powertools batch), those on their last receive counted as dead letters, and the batch's
 * metrics published however it ends. A batch whose every record failed is reported like any
 * other (`throwOnFullBatchFailure: false`): throwing would skip the dead-letter accounting, and
 * SQS retries the reported records exactly as it would a thrown batch.
 */
export function sqsBatchHandler({
  metrics,
  logger,
  processing = "parallel",
}: {
  metrics: Metrics;
  logger: Logger;
  processing?: RecordProcessing;
}) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent, context: Context, handleRecord: (record: SQSRecord) => Promise<void>) => {
    try {
      const response = await processPartialResponse(event, handleRecord, processor, {
        context,
        throwOnFullBatchFailure: false,
        processInParallel: processing === "parallel",
      });
      return recordDeadLetters(event, response, { metrics, logger });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}

/**
 * A queue consumer: its runtime loaded once (on the first batch), a record handler prepared per
 * batch (what needs the Lambda context, such as Powertools idempotency's), then the batch run by
 * `sqsBatchHandler`. Every consumer has this shape; here it is written once.
 */
export function sqsConsumer<R>({
  runtime,
  forBatch,
  ...options
}: Parameters<typeof sqsBatchHandler>[0] & {
  runtime: () => Promise<R>;
  forBatch: (runtime: R, context: Context) => (record: SQSRecord) => Promise<void>;
}) {
  const runBatch = sqsBatchHandler(options);
  return async (event: SQSEvent, context: Context) => runBatch(event, context, forBatch(await runtime(), context));
}

/**
 * A record's body parsed, or its failure logged with the reason before it is rethrown: the record
 * then fails each receive until SQS dead-letters it, and on-call can read why in the logs.
 */
export function parseRecord<T>(record: SQSRecord, parse: (body: string) => T, logger: Logger, what: string): T {
  try {
    return parse(record.body);
  } catch (err) {
    logger.error(`${what}: it fails until it is dead-lettered`, {
      messageId: record.messageId,
      reason: (err as { reason?: string }).reason ?? (err as Error).message,
    });
    throw err;
  }
}
