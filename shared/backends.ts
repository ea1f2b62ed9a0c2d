// The Lambda handlers' backends: builds the backends from configuration
// once per Lambda container. It imports no graph code, so a handler that only reads
// stores does not bundle LangGraph.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfig, type Config } from "./config";
import { once } from "./once";
import { secretValue } from "./secrets";
import type { ConversationStore } from "./stores/conversations";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SqsPublisher, type QueuePublisher } from "./queue";
import type { AgentStore } from "./stores/agent-store";
import { PostgrestAgentStore } from "./stores/postgrest-agent-store";
import { PostgrestConversationStore } from "./stores/postgrest-conversations";
import { supabaseRest } from "./stores/postgrest";
import type { FileObjects } from "./files/objects";

/** What the handlers run against; the local stack builds the same from its stand-ins. */
export interface Backends {
  config: Config;
  dynamo: DynamoDBClient;
  /** Supabase: absent when none is configured; the agent then runs without memory or history. */
  conversations?: ConversationStore;
  store?: AgentStore;
  /** where each finished turn goes for memory extraction; absent: no extraction */
  extractionQueue?: QueuePublisher;
  /** the attachments bucket (a folder locally); absent: no file routes, no data tools */
  files?: FileObjects;
}

/** Backends for Lambda: DynamoDB from the execution role, Supabase over PostgREST when configured. */
export const awsBackends = once(async (): Promise<Backends> => {
  const config = loadConfig();
  const dynamo = new DynamoDBClient({});
  const files = await attachmentsBucket(config);
  if (!config.SUPABASE_URL) return { config, dynamo, ...files };
  const key = await secretValue(
    "SUPABASE_SERVICE_ROLE_KEY",
    config.SUPABASE_SERVICE_ROLE_KEY,
    config.SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN,
  );
  const rest = supabaseRest(config.SUPABASE_URL, key);
  return {
    config,
    dynamo,
    ...files,
    conversations: new PostgrestConversationStore(rest),
    store: new PostgrestAgentStore(rest),
    ...(config.EXTRACTION_QUEUE_URL
      ? { extractionQueue: new SqsPublisher(new SQSClient({}), config.EXTRACTION_QUEUE_URL) }
      : {}),
  };
});

/** The attachments bucket when the stack configured one; S3's client is loaded only then. */
async function attachmentsBucket(config: Config): Promise<{ files?: FileObjects }> {
  if (!config.ATTACHMENTS_BUCKET) return {};
  const [{ S3Client }, { S3FileObjects }] = await Promise.all([
    import("@aws-sdk/client-s3"),
    import("./files/objects"),
  ]);
  return { files: new S3FileObjects(new S3Client({}), config.ATTACHMENTS_BUCKET) };
}
