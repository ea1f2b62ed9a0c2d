// The Lambda handlers' backends: builds the backends from configuration
// once per Lambda container. It imports no graph code, so a handler that only reads
// stores does not bundle LangGraph.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { retryingTransactionConflicts } from "./stores/transaction-conflicts";
import { loadConfig, type Config } from "./config";
import { loadedOnFirstCall } from "./deferred";
import { once } from "./once";
import { secretSource } from "./secrets";
import type { DocumentProcessor } from "./documents/process";
import type { ObjectSource } from "./ingest/object-source";
import type { ConversationStore } from "./stores/conversations";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SqsPublisher, type QueuePublisher } from "./queue";
import type { CronScheduler } from "./cron-scheduler";
import type { AgentStore } from "./stores/agent-store";
import { RpcAgentStore } from "./stores/rpc-agent-store";
import { RpcConversationStore } from "./stores/rpc-conversations";
import { RpcUserData, type UserDataStore } from "./stores/user-data";
import { postgrestRpc, supabaseRest } from "./stores/postgrest";
import type { BucketOptions, FileObjects } from "./files/objects";
import type { DataEngine } from "./files/data-engine";

/** What the handlers run against; the local stack builds the same from its stand-ins. */
export interface Backends {
  config: Config;
  dynamo: DynamoDBClient;
  /** Supabase: absent when none is configured; the agent then runs without memory or history. */
  conversations?: ConversationStore;
  store?: AgentStore;
  /** a user's data in Supabase as a whole (export, erasure, retention); with the two above */
  userData?: UserDataStore;
  /** where each finished turn goes for memory extraction; absent: no extraction */
  extractionQueue?: QueuePublisher;
  /** the attachments bucket (a folder locally); absent: no file routes, no data tools */
  files?: FileObjects;
  /** DuckDB over the data files: the data function in AWS, a worker pool locally; absent: data files unavailable */
  dataEngine?: DataEngine;
  /** where the Intercom webhook queues notifications for the support worker */
  supportQueue?: QueuePublisher;
  /** where runs.create hands background runs to the run worker */
  runsQueue?: QueuePublisher;
  /** where a finished run's completion webhook goes to be sent (functions/webhook-sender.ts) */
  webhooksQueue?: QueuePublisher;
  /** where crons' schedules live: EventBridge Scheduler in AWS, a timer locally */
  cronScheduler?: CronScheduler;
  /** where ingestion reads documents: the bucket in AWS, a folder locally; absent: S3 */
  documents?: ObjectSource;
  /** extraction and chunking: in the handler's thread in AWS; a worker thread locally */
  documentProcessor?: DocumentProcessor;
  /** how the support worker reaches Intercom: fetch in AWS, the stand-in locally */
  intercomFetch?: typeof fetch;
  /** the documents bucket as admins manage it (upload, delete); absent: no knowledge admin routes */
  knowledge?: KnowledgeBucket;
}

/**
 * The documents bucket's prefix as the knowledge admin routes see it: a document's `source` is
 * its key under `prefix`, and its id in the knowledge base `${bucket}/${prefix}${source}`.
 */
export interface KnowledgeBucket {
  bucket: string;
  prefix: string;
  objects: FileObjects;
}

/** Backends for Lambda: DynamoDB from the execution role, Supabase over PostgREST when configured. */
export const awsBackends = once(async (): Promise<Backends> => {
  const config = loadConfig();
  const dynamo = retryingTransactionConflicts(new DynamoDBClient({}));
  const files = { ...attachmentsBucket(config), ...documentsBucket(config) };
  const crons = cronScheduler(config);
  if (!config.SUPABASE_URL) return { config, dynamo, ...files, ...queues(config), ...crons };
  const key = secretSource(
    "SUPABASE_SERVICE_ROLE_KEY",
    config.SUPABASE_SERVICE_ROLE_KEY,
    config.SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN,
  );
  const rpc = postgrestRpc(supabaseRest(config.SUPABASE_URL, key));
  return {
    config,
    dynamo,
    ...files,
    conversations: new RpcConversationStore(rpc),
    store: new RpcAgentStore(rpc),
    userData: new RpcUserData(rpc),
    ...queues(config),
    ...crons,
  };
});

/**
 * EventBridge Scheduler, where the stack gave this function the crons' group and role; its client
 * loaded with the first cron made or removed, not at init.
 */
function cronScheduler(config: Config): Pick<Backends, "cronScheduler"> {
  const { CRON_SCHEDULE_GROUP: group, CRON_SCHEDULER_ROLE_ARN: roleArn, CRON_TARGET_QUEUE_ARN: queueArn } = config;
  if (!group || !roleArn || !queueArn) return {};
  const scheduler = loadedOnFirstCall<CronScheduler>(
    async () => new (await import("./eventbridge-scheduler")).EventBridgeCrons({ group, roleArn, queueArn }),
    { put: true, remove: true },
  );
  return { cronScheduler: scheduler };
}

/** A bucket's objects, S3's client loaded with the first call (a plain chat turn makes none). */
const bucketObjects = (bucket: string, options?: BucketOptions): FileObjects =>
  loadedOnFirstCall<FileObjects>(async () => new (await import("./files/objects")).S3FileObjects(bucket, options), {
    uploadUrl: true,
    downloadUrl: true,
    read: true,
    write: true,
    delete: true,
    deleteUnder: true,
  });

/** The attachments bucket when the stack configured one. */
function attachmentsBucket(config: Config): Pick<Backends, "files" | "dataEngine"> {
  if (!config.ATTACHMENTS_BUCKET) return {};
  const functionName = config.DATA_FUNCTION_NAME;
  // The data function, by Lambda Invoke, where the stack granted it (its client loaded with the first query).
  const engine = functionName
    ? {
        dataEngine: loadedOnFirstCall<DataEngine>(
          async () => (await import("./files/lambda-engine")).lambdaDataEngine(functionName),
          { inspect: true, describe: true, query: true },
        ),
      }
    : {};
  // A file's bytes are checked once, so they are written once: no PUT may replace them.
  return { files: bucketObjects(config.ATTACHMENTS_BUCKET, { writeOnce: true }), ...engine };
}

/** The documents bucket when the stack granted this function its admin side (the knowledge routes). */
function documentsBucket(config: Config): { knowledge?: KnowledgeBucket } {
  if (!config.DOCUMENTS_BUCKET) return {};
  // A document is replaced by uploading it again: the same key, new content.
  const objects = bucketObjects(config.DOCUMENTS_BUCKET);
  return { knowledge: { bucket: config.DOCUMENTS_BUCKET, prefix: config.DOCUMENTS_PREFIX, objects } };
}

/** The queues this function sends to, from the URLs the stack gave it; one SQS client for all. */
function queues(config: Config): Pick<Backends, "extractionQueue" | "supportQueue" | "runsQueue" | "webhooksQueue"> {
  const urls = [
    config.EXTRACTION_QUEUE_URL,
    config.SUPPORT_QUEUE_URL,
    config.RUNS_QUEUE_URL,
    config.WEBHOOKS_QUEUE_URL,
  ];
  if (urls.every((url) => !url)) return {};
  const sqs = new SQSClient({});
  return {
    ...(config.EXTRACTION_QUEUE_URL ? { extractionQueue: new SqsPublisher(sqs, config.EXTRACTION_QUEUE_URL) } : {}),
    ...(config.SUPPORT_QUEUE_URL ? { supportQueue: new SqsPublisher(sqs, config.SUPPORT_QUEUE_URL) } : {}),
    ...(config.RUNS_QUEUE_URL ? { runsQueue: new SqsPublisher(sqs, config.RUNS_QUEUE_URL) } : {}),
    ...(config.WEBHOOKS_QUEUE_URL ? { webhooksQueue: new SqsPublisher(sqs, config.WEBHOOKS_QUEUE_URL) } : {}),
  };
}
