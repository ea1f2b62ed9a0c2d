import { S3Client } from "@aws-sdk/client-s3";
import type { SQSRecord } from "aws-lambda";
import { awsWiring, type Wiring } from "../shared/wiring";
import { once } from "../shared/once";
import { S3ObjectSource } from "../shared/ingest/object-source";
import { buildIngestRuntime, type IngestRuntime } from "../shared/ingest/runtime";
import { parseS3Notification } from "../shared/ingest/s3-events";
import { DocumentBusy } from "../shared/ingest/document-busy";
import type { IngestOutcome } from "../shared/ingest/ingestor";
import { parseRecord, sqsConsumer } from "../shared/sqs-batch";
import { createLogger } from "../shared/logger";
import { createMetrics, MetricUnit } from "../shared/metrics";
import { storableTextProblem } from "../shared/text";

const logger = createLogger("ingest");
const metrics = createMetrics("ingest");
const OUTCOME_METRIC = {
  replaced: "DocumentsIngested",
  deleted: "DocumentsDeleted",
  stale: "DocumentEventsStale",
  skipped: "DocumentsSkipped",
  missing: "DocumentsMissing",
} as const;

/**
 * SQS consumer of S3 notifications for the documents bucket. Each message's object events
 * are applied in order; a malformed message, or a store or embeddings failure, fails only
 * its own record (retried, then dead-lettered). Every document is logged with its key and how it
 * ended (ingested, skipped with the reason, failed with the error) and recorded on its
 * knowledge_documents row; documents that can never be ingested are acknowledged.
 */
export function createIngestHandler(runtime: () => Promise<IngestRuntime>) {
  return sqsConsumer({
    metrics,
    logger,
    // Sequential: extraction and chunking are CPU- and memory-heavy, and five large documents at
    // once could exhaust the function's memory; embedding calls are already concurrent per document.
    processing: "sequential",
    runtime,
    forBatch:
      ({ ingestor }) =>
      async (record: SQSRecord) => {
        const events = parseRecord(record, parseS3Notification, "malformed S3 notification");
        for (const objectEvent of events) {
          const fields = {
            messageId: record.messageId,
            key: objectEvent.key,
            kind: objectEvent.kind,
            sequencer: objectEvent.sequencer,
          };
          // Postgres refuses a NUL or an unpaired surrogate in any text: such a key can be recorded
          // nowhere, and retrying cannot change it. Skipped and logged, the record acknowledged.
          const problem = storableTextProblem(objectEvent.key);
          if (problem) {
            metrics.addMetric(OUTCOME_METRIC.skipped, MetricUnit.Count, 1);
            logger.warn("document skipped", {
              ...fields,
              action: "skipped",
              reason: `its key cannot be stored (a key ${problem})`,
            });
            continue;
          }
          let outcome: IngestOutcome;
          try {
            outcome = await ingestor.handle(objectEvent);
          } catch (err) {
            // Not a failure: the same content is being processed; SQS brings this one back after.
            if (err instanceof DocumentBusy) {
              logger.info("document busy", { ...fields, error: err.message });
              throw err;
            }
            metrics.addMetric("DocumentsFailed", MetricUnit.Count, 1);
            logger.error("document failed", { ...fields, action: "failed", error: (err as Error).message });
            throw err;
          }
          metrics.addMetric(OUTCOME_METRIC[outcome.action], MetricUnit.Count, 1);
          if (outcome.action === "skipped") logger.warn("document skipped", { ...fields, ...outcome });
          else logger.info("document ingested", { ...fields, ...outcome });
        }
      },
  });
}

/** The handler on any wiring: Lambda's below (documents from S3), or the local stack's (a folder). */
export const createHandler = ({ backends }: Wiring) =>
  createIngestHandler(
    once(async () => {
      const b = await backends();
      return buildIngestRuntime(b, b.documents ?? new S3ObjectSource(new S3Client({})), b.documentProcessor);
    }),
  );

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
