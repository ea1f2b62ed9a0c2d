import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { Logger } from "./logger";
import { MetricUnit, type Metrics } from "./metrics";

/** Receives before SQS moves a message to its queue's dead-letter queue (every queue's redrive policy). */
export const MAX_RECEIVES = 3;

const receiveCount = (record: SQSRecord) => Number(record.attributes?.ApproximateReceiveCount);

/**
 * SQS, not the consumer, moves a message to the dead-letter queue; but a consumer knows when a
 * record fails on its last allowed receive. Those are counted as `DeadLettered` (EMF), so an alarm
 * sees what went to the DLQ without reading the queue (each one's reason is logged as it fails:
 * `loggingFailures`). Returns the response unchanged.
 */
export function recordDeadLetters(
  event: SQSEvent,
  response: SQSBatchResponse,
  { metrics, maxReceives = MAX_RECEIVES }: { metrics: Metrics; maxReceives?: number },
): SQSBatchResponse {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const lastTries = event.Records.filter((r) => failed.has(r.messageId) && receiveCount(r) >= maxReceives);
  if (lastTries.length > 0) metrics.addMetric("DeadLettered", MetricUnit.Count, lastTries.length);
  return response;
}

/**
 * The record handler, with each failure logged with its reason before it goes back to the batch:
 * a warning while SQS will deliver the message again, an error on its last receive, when it goes
 * to the dead-letter queue. A dead-lettered message's log line says why, whatever failed.
 */
function loggingFailures(handleRecord: (record: SQSRecord) => Promise<void>, logger: Logger) {
  return async (record: SQSRecord) => {
    try {
      await handleRecord(record);
    } catch (err) {
      const last = receiveCount(record) >= MAX_RECEIVES;
      const details = { messageId: record.messageId, receiveCount: receiveCount(record), reason: reasonOf(err) };
      if (last) logger.error("record failed its last receive: SQS moves it to the dead-letter queue", details);
      else logger.warn("record failed: SQS delivers it again after its visibility timeout", details);
      throw err;
    }
  };
}

/** What went wrong, in words: a parse error's reason (zod's, shared/http.ts), else its message. */
const detailOf = (err: unknown) => (err as { reason?: string }).reason ?? (err as Error).message;
const reasonOf = (err: unknown) => (err instanceof Error ? `${err.name}: ${detailOf(err)}` : String(err));

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
      const response = await processPartialResponse(event, loggingFailures(handleRecord, logger), processor, {
        context,
        throwOnFullBatchFailure: false,
        processInParallel: processing === "parallel",
      });
      return recordDeadLetters(event, response, { metrics });
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

/** The error a record whose body cannot be used fails with, each receive until SQS dead-letters it. */
export class UnusableRecord extends Error {
  override readonly name = "UnusableRecord";
}

/**
 * A record's body parsed, or an UnusableRecord saying `what` is wrong and why (the batch runner
 * logs it with the record's message id).
 */
export function parseRecord<T>(record: SQSRecord, parse: (body: string) => T, what: string): T {
  try {
    return parse(record.body);
  } catch (err) {
    throw new UnusableRecord(`${what}: ${detailOf(err)}`, {
      cause: err,
    });
  }
}
