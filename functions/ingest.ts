import { S3Client } from "@aws-sdk/client-s3";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import { awsWiring, type Wiring } from "../shared/wiring";
import { once } from "../shared/once";
import { S3ObjectSource } from "../shared/ingest/object-source";
import { buildIngestRuntime, type IngestRuntime } from "../shared/ingest/runtime";
import { parseS3Notification } from "../shared/ingest/s3-events";
import { sqsBatchHandler } from "../shared/sqs-batch";
import { createLogger } from "../shared/logger";
import { createMetrics, MetricUnit } from "../shared/metrics";

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
 * its own record (retried, then dead-lettered). Documents that can never be ingested are
 * logged with their key and reason, and acknowledged.
 */
export function createIngestHandler(runtime: () => Promise<IngestRuntime>) {
  // Sequential: extraction and chunking are CPU- and memory-heavy, and five large documents at
  // once could exhaust the function's memory; embedding calls are already concurrent per document.
  const runBatch = sqsBatchHandler({ metrics, logger, processing: "sequential" });
  return async (event: SQSEvent, context: Context) => {
    const { ingestor } = await runtime();
    const handleRecord = async (record: SQSRecord) => {
      for (const objectEvent of parseS3Notification(record.body)) {
        const outcome = await ingestor.handle(objectEvent);
        metrics.addMetric(OUTCOME_METRIC[outcome.action], MetricUnit.Count, 1);
        const fields = {
          messageId: record.messageId,
          key: objectEvent.key,
          kind: objectEvent.kind,
          sequencer: objectEvent.sequencer,
          ...outcome,
        };
        if (outcome.action === "skipped") logger.warn("document skipped", fields);
        else logger.info("document ingested", fields);
      }
    };
    return runBatch(event, context, handleRecord);
  };
}

/** The handler on any wiring: Lambda's below (documents from S3), or the local stack's (a folder). */
export const createHandler = ({ backends }: Wiring) =>
  createIngestHandler(
    once(async () => {
      const b = await backends();
      return buildIngestRuntime(b, b.documents ?? new S3ObjectSource(new S3Client({})));
    }),
  );

export const handler = createHandler(awsWiring());
