import type { Construct } from "constructs";

/**
 * Deploy-time settings, from CDK context (`cdk deploy -c bedrockModelId=...` or cdk.json).
 * Each is documented in the README; none is required to synthesize.
 */
export interface StackSettings {
  /** Bedrock chat model id; unset deploys the offline stand-in model. */
  bedrockModelId?: string;
  bedrockEmbeddingModelId?: string;
  /** Embedding width; the migrations' vector(1024) columns must be changed to match. */
  embeddingDimension?: number;
  /** https://<project>.supabase.co */
  supabaseUrl: string;
  /** An existing Secrets Manager secret holding the service-role key; unset creates one to fill in. */
  supabaseSecretArn?: string;
  checkpointTtlDays?: number;
  /** The OIDC provider whose JWTs the API accepts. */
  oidcIssuer?: string;
  oidcAudience?: string;
  /** The Intercom admin (bot) the support agent replies as. */
  intercomAdminId?: string;
  /** X-Ray tracing of the API and functions. */
  tracing?: boolean;
  /** Bundle LangSmith's client, for tracing to LangSmith (LANGSMITH_TRACING and its key are then yours to set). */
  langsmith?: boolean;
  /** Key prefix of the documents to ingest from the bucket. */
  documentsPrefix: string;
  /** Server-to-server clients, each given an API key under the clients' usage plan. */
  apiKeys?: Array<{ client: string; trusted: boolean }>;
  /** Most concurrent invocations of each queue consumer (Lambda allows 2 to 1000). */
  queueConcurrency?: number;
  /** Days before an attachment (a session's uploaded file) expires from its bucket; default 30. */
  attachmentsExpireDays?: number;
}

export function readSettings(scope: Construct): StackSettings {
  const get = (key: string) => {
    const v = scope.node.tryGetContext(key);
    return v === undefined || v === "" ? undefined : String(v);
  };
  const concurrency = wholeNumber("queueConcurrency", get("queueConcurrency"), 2, 1000);
  return {
    apiKeys: parseApiKeys(get("apiKeys")),
    bedrockModelId: get("bedrockModelId"),
    bedrockEmbeddingModelId: get("bedrockEmbeddingModelId"),
    embeddingDimension: wholeNumber("embeddingDimension", get("embeddingDimension"), 1, 2000),
    supabaseUrl: get("supabaseUrl") ?? "https://your-project.supabase.co",
    supabaseSecretArn: get("supabaseSecretArn"),
    checkpointTtlDays: wholeNumber("checkpointTtlDays", get("checkpointTtlDays"), 1, 3650),
    documentsPrefix: get("documentsPrefix") ?? "knowledge/",
    queueConcurrency: concurrency ?? 5,
    attachmentsExpireDays: wholeNumber("attachmentsExpireDays", get("attachmentsExpireDays"), 1, 3650),
    intercomAdminId: get("intercomAdminId"),
    oidcIssuer: get("oidcIssuer"),
    tracing: get("tracing") === "true",
    langsmith: get("langsmith") === "true",
    oidcAudience: get("oidcAudience"),
  };
}

/** `billing:trusted,reports`: client names, `:trusted` marking those that may name the user. */
function parseApiKeys(value: string | undefined): StackSettings["apiKeys"] {
  if (value === undefined) return undefined;
  return value.split(",").map((entry) => {
    const match = /^([A-Za-z0-9_-]{1,64})(:trusted)?$/.exec(entry.trim());
    if (!match)
      throw new Error(
        `context apiKeys: "${entry}" is not a client name (letters, digits, - and _), optionally followed by :trusted`,
      );
    return { client: match[1]!, trusted: match[2] !== undefined };
  });
}

function wholeNumber(key: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`context ${key} must be a whole number from ${min} to ${max}, got ${value}`);
  return n;
}
