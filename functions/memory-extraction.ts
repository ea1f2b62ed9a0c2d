import { makeIdempotent } from "@aws-lambda-powertools/idempotency";
import type { SQSRecord } from "aws-lambda";
import { parseExtractionMessage, type ExtractionMessage } from "../graph/memory/message";
import { buildExtractionRuntime, type ExtractionRuntime } from "../graph/memory/runtime";
import { awsWiring, type Wiring } from "../shared/wiring";
import { once } from "../shared/once";
import { parseRecord, sqsConsumer } from "../shared/sqs-batch";
import { createLogger } from "../shared/logger";
import { createMetrics, MetricUnit } from "../shared/metrics";

const logger = createLogger("memory-extraction");
const metrics = createMetrics("memory-extraction");

/**
 * SQS consumer: each record is one chat turn. Records are processed one by one and
 * failures reported per record (Powertools batch), so one bad message never holds up its
 * batch: it is retried, then dead-lettered. Processing is idempotent on the turn id
 * (Powertools idempotency records in DynamoDB): a redelivered turn adds nothing.
 */
export function createExtractionHandler(runtime: () => Promise<ExtractionRuntime>) {
  let processTurn: ((turn: ExtractionMessage) => Promise<unknown>) | undefined;
  return sqsConsumer({
    metrics,
    logger,
    // Parallel: each record is one model call waiting on the network, and a batch of 10 in turn
    // would not fit the timeout; reconciliation converges whatever order two turns land in (supersede_memories, 016).
    processing: "parallel",
    runtime,
    forBatch: ({ extractor, idempotency }, context) => {
      idempotency.config.registerLambdaContext(context);
      // Counted where the turn is processed, not where its result is answered: a redelivered turn
      // is answered from its idempotency record, and counting it again would inflate the metrics.
      processTurn ??= makeIdempotent(async (turn: ExtractionMessage) => {
        const result = await extractor.process(turn);
        metrics.addMetric("FactsExtracted", MetricUnit.Count, result.facts);
        metrics.addMetric("MemoriesAdded", MetricUnit.Count, result.added);
        metrics.addMetric("MemoryDuplicates", MetricUnit.Count, result.duplicates);
        metrics.addMetric("MemoriesSuperseded", MetricUnit.Count, result.superseded);
        metrics.addMetric("MemoriesForgotten", MetricUnit.Count, result.forgotten);
        return result;
      }, idempotency);
      return async (record: SQSRecord) => {
        const turn = parseRecord(record, parseExtractionMessage, "invalid message");
        const result = await processTurn!(turn);
        logger.info("turn processed", {
          messageId: record.messageId,
          sessionId: turn.session_id,
          turnId: turn.turn_id,
          result,
        });
      };
    },
  });
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ backends }: Wiring) =>
  createExtractionHandler(once(async () => buildExtractionRuntime(await backends())));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
