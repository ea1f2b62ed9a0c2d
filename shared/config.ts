import * as z from "zod";
import { UserQuotas } from "./quotas";
import { ProjectSettings } from "./session-settings";

/**
 * Every setting, in one place, read from the environment and validated at startup.
 * A bad or missing value fails with the setting's name, not deep inside a request.
 */
/** Longest accepted chat message by default, in UTF-8 bytes (MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024;

/** A setting holding a JSON object, parsed and checked against `schema`; "{}" when unset. */
const jsonSetting = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .default("{}")
    .transform((text, ctx): z.infer<S> => {
      try {
        const parsed = schema.safeParse(JSON.parse(text), { jitless: true }); // once a cold start (loadConfig)
        if (parsed.success) return parsed.data;
        ctx.addIssue({
          code: "custom",
          message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join(", "),
        });
      } catch {
        ctx.addIssue({ code: "custom", message: "must be a JSON object" });
      }
      return z.NEVER;
    });

const Settings = z.object({
  /** DynamoDB table holding graph checkpoints. */
  CHECKPOINT_TABLE: z.string().min(3).max(255).default("agent-checkpoints"),
  /** Days after its last use a thread's checkpoints expire; unset keeps them. */
  CHECKPOINT_TTL_DAYS: z.coerce.number().positive().optional(),
  /** Hours a run's kept stream events (background and resumable runs) can be replayed; the table's TTL removes them. */
  RUN_EVENTS_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(24),

  /** Bedrock chat model (e.g. anthropic.claude-sonnet-4-5-20250929-v1:0); unset uses the offline stand-in. */
  BEDROCK_MODEL_ID: z.string().min(1).optional(),
  /** Bedrock embedding model; unset uses the hashing stand-in. Titan v2 is amazon.titan-embed-text-v2:0. */
  BEDROCK_EMBEDDING_MODEL_ID: z.string().min(1).optional(),
  /** Region for Bedrock calls; defaults to the function's AWS_REGION. */
  BEDROCK_REGION: z.string().min(1).optional(),
  /** Embedding width, shared by the model and the pgvector columns. Titan v2 offers 256, 512 or 1024. */
  EMBEDDING_DIM: z.coerce.number().int().positive().default(1024),

  /**
   * recall_memory drops matches scoring below this cosine similarity. 0.15 is calibrated for the hashing
   * embedder on test/fixtures/memories.json (`npm run bench -- retrieval`); recalibrate for Titan.
   */
  MEMORY_MIN_SCORE: z.coerce.number().min(-1).max(1).default(0.15),

  /**
   * Extraction: a new fact at least this similar (cosine) to a stored memory is a duplicate.
   * Calibrated for the hashing embedder on test/fixtures/fact-pairs.json (`npm run bench -- retrieval`).
   */
  MEMORY_DUPLICATE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.8),
  /** SQS queue the chat function hands each turn to for memory extraction; unset: no extraction. */
  EXTRACTION_QUEUE_URL: z.url().optional(),
  /** The run worker's queue (background runs of the Agent Server API); unset: runs.create is 503. */
  RUNS_QUEUE_URL: z.url().optional(),
  /** The webhook sender's queue (a run's completion webhook). */
  WEBHOOKS_QUEUE_URL: z.url().optional(),
  /** Crons on EventBridge Scheduler: the stack's schedule group, the role it sends with, the run worker's queue. */
  CRON_SCHEDULE_GROUP: z.string().min(1).max(64).optional(),
  CRON_SCHEDULER_ROLE_ARN: z.string().startsWith("arn:").optional(),
  CRON_TARGET_QUEUE_ARN: z.string().startsWith("arn:").optional(),
  /** Hosts a run's `webhook` may name (comma-separated, each with an optional port); unset: none. */
  WEBHOOK_HOSTS: z.string().max(4096).optional(),
  /** DynamoDB table of Powertools idempotency records (queue consumers). */
  IDEMPOTENCY_TABLE: z.string().min(3).max(255).default("agent-idempotency"),

  /** Ingestion: documents over this size are skipped (logged, not retried). */
  INGEST_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /** Chunk size and overlap, in characters. */
  INGEST_CHUNK_SIZE: z.coerce.number().int().min(100).default(1000),
  INGEST_CHUNK_OVERLAP: z.coerce.number().int().min(0).default(150),
  /** Texts per embeddings call, and calls in flight per document. */
  INGEST_EMBED_BATCH: z.coerce.number().int().min(1).max(256).default(32),
  INGEST_EMBED_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  /**
   * Bounds on one document (shared/documents/limits.ts): its extracted text, what a DOCX may
   * inflate to, PDF pages, chunks, and its whole processing time. A document over one is skipped
   * with the reason. 2000 chunks of 1000 characters is about 600 printed pages; the time bound
   * leaves a batch of 5 documents, processed in turn, inside the function's 120 s.
   */
  INGEST_MAX_TEXT_CHARS: z.coerce.number().int().positive().default(4_000_000),
  INGEST_MAX_UNZIPPED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  INGEST_MAX_PDF_PAGES: z.coerce.number().int().positive().default(2000),
  INGEST_MAX_CHUNKS: z.coerce.number().int().positive().default(2000),
  INGEST_DOCUMENT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(900_000).default(20_000),

  /** How long a message sent with if_busy "queue" waits for the session's previous run. */
  SESSION_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(25_000).default(20_000),
  /**
   * How long a session lease lasts without a heartbeat (shared/stores/session-lease.ts); its holder
   * renews it every third of that, which is also how soon it sees a multitask_strategy interrupt.
   */
  SESSION_LEASE_MS: z.coerce.number().int().min(3_000).max(300_000).default(30_000),
  /** Browser origins allowed to call the API, comma-separated ("*": any); none by default (shared/cors.ts). */
  CORS_ORIGINS: z.string().default(""),
  /** The offline stand-in's pause between streamed words, so streaming is visible locally. */
  OFFLINE_STREAM_DELAY_MS: z.coerce.number().int().min(0).max(1000).default(15),
  /** A lighter Bedrock model for naming sessions and long sessions' running summaries; unset uses BEDROCK_MODEL_ID. */
  BEDROCK_NAMING_MODEL_ID: z.string().min(1).optional(),
  /**
   * The most input tokens one chat model call is sent (graph/chat/context.ts); unset picks one
   * that fits the model (defaultContextBudget). Counted by shared/models/token-estimate.ts,
   * calibrated by the previous call's reported usage.
   */
  CONTEXT_TOKEN_BUDGET: z.coerce.number().int().min(1000).optional(),

  /** Intercom: API base URL, the bot admin that replies, and the app's secrets (env locally, Secrets Manager in AWS). */
  INTERCOM_API_URL: z.url().default("https://api.intercom.io"),
  INTERCOM_ADMIN_ID: z.string().min(1).optional(),
  INTERCOM_ACCESS_TOKEN: z.string().min(1).optional(),
  INTERCOM_ACCESS_TOKEN_SECRET_ARN: z.string().min(1).optional(),
  INTERCOM_CLIENT_SECRET: z.string().min(1).optional(),
  INTERCOM_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  /** SQS queue between the Intercom webhook and the support worker. */
  SUPPORT_QUEUE_URL: z.url().optional(),
  /** An MCP server (Streamable HTTP) whose tools the support agent may also use. */
  SUPPORT_MCP_URL: z.url().optional(),
  SUPPORT_MAX_HOPS: z.coerce.number().int().min(1).max(5).default(2),
  SUPPORT_SNOOZE_MINUTES: z.coerce.number().int().min(1).default(60),

  /**
   * How long an erasure waits before it lists a user's sessions again, for new owner records to
   * reach the table's user index (a GSI, eventually consistent: usually well under a second).
   */
  USER_INDEX_LAG_MS: z.coerce.number().int().min(0).max(5000).default(1000),
  /**
   * Largest export answered inline, in UTF-8 bytes: under Lambda's 6 MB response cap. A larger one
   * is written to the attachments bucket and answered as a download link (docs/user-data.md).
   */
  EXPORT_INLINE_MAX_BYTES: z.coerce.number().int().min(1024).max(5_000_000).default(5_000_000),

  /** Longest accepted chat message, in UTF-8 bytes. */
  MAX_MESSAGE_BYTES: z.coerce.number().int().positive().default(DEFAULT_MAX_MESSAGE_BYTES),
  /** Graph steps per turn before the run is stopped (each model call and tool round is a step or two). */
  AGENT_RECURSION_LIMIT: z.coerce.number().int().min(3).default(12),
  /**
   * The settings new sessions start with, per project, as JSON: {"<project id>": {"memory": false},
   * "*": {...}} ("*" applies to every session, a project's entry over it). See shared/session-settings.ts.
   */
  PROJECT_SETTINGS: jsonSetting(ProjectSettings),
  /**
   * Per-user limits, as JSON: {"turnsPerMinute": 10, "tokensPerDay": 200000} (shared/quotas.ts).
   * Over one, a turn answers 429 quota_exceeded with Retry-After before any model call. Unset: none.
   */
  USER_QUOTAS: jsonSetting(UserQuotas),
  /**
   * Days a session may stay idle (no turn) before it is erased everywhere: state, transcript, files,
   * runs (graph/chat/retention.ts). Unset: sessions are kept until deleted.
   */
  SESSION_RETENTION_DAYS: z.coerce.number().positive().max(36_500).optional(),
  /**
   * Model ids declared without tool support (comma-separated): a session on one of them binds no
   * tools, and its prompt says it has none.
   */
  MODELS_WITHOUT_TOOLS: z
    .string()
    .default("")
    .transform((text) =>
      text
        .split(",")
        .map((m) => m.trim())
        .filter(Boolean),
    ),

  /**
   * Who the caller is. "authorizer": from API Gateway's authorizer context (AWS).
   * "local": from the body's user_id or an x-user-id header, for the local stack only.
   */
  AUTH_MODE: z.enum(["authorizer", "local"]).default("authorizer"),

  /** The OIDC provider whose bearer JWTs the API's authorizer accepts (issuer, audience, and its JWKS). */
  OIDC_ISSUER: z.url().optional(),
  OIDC_AUDIENCE: z.string().min(1).optional(),
  /** Defaults to <issuer>/.well-known/jwks.json. */
  OIDC_JWKS_URL: z.url().optional(),
  /**
   * The knowledge base's admins: JWT users whose ADMIN_CLAIM (e.g. "cognito:groups") holds
   * ADMIN_GROUP (a list, or a space- or comma-separated string). Trusted API keys are admins too.
   */
  ADMIN_CLAIM: z.string().min(1).optional(),
  ADMIN_GROUP: z.string().min(1).optional(),
  /**
   * Set by the stack when API keys are on (`apiKeys` context): the secret holding the API key
   * JWT users are metered under. Its presence also lets the authorizer accept `ApiKey` tokens.
   */
  USERS_API_KEY_SECRET_ARN: z.string().min(1).optional(),

  /** Supabase project; required where the stores run over PostgREST (Lambda). */
  SUPABASE_URL: z.url().optional(),
  SUPABASE_SERVICE_ROLE_KEY: z.string().min(1).optional(),
  /** In AWS the key is not in the environment: this names the Secrets Manager secret holding it. */
  SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN: z.string().min(1).optional(),

  /** The documents bucket and prefix, for the knowledge admin routes (uploads and deletes); unset: none. */
  DOCUMENTS_BUCKET: z.string().min(3).optional(),
  DOCUMENTS_PREFIX: z.string().default("knowledge/"),
  /** Largest document an admin may upload through the API. */
  KNOWLEDGE_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  /** Attachments (files of a session): the S3 bucket; unset in AWS means no file routes or data tools. */
  ATTACHMENTS_BUCKET: z.string().min(3).optional(),
  /** The data function (functions/data.ts) the data tools and upload checks invoke; unset: none. */
  DATA_FUNCTION_NAME: z.string().min(1).optional(),
  /** Largest accepted file, files per session, rows loaded per data file. */
  FILES_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(20 * 1024 * 1024),
  FILES_PER_SESSION: z.coerce.number().int().min(1).max(1000).default(20),
  FILES_MAX_ROWS: z.coerce.number().int().min(1).default(1_000_000),
  /** Images sent inline with a chat message (base64 in the body), in bytes once decoded, all together. */
  INLINE_IMAGES_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(4 * 1024 * 1024)
    .default(1024 * 1024),
  /** Lifetime of presigned upload and download URLs. */
  FILES_URL_TTL_SECONDS: z.coerce.number().int().min(30).max(3600).default(900),
  /**
   * query_data: statement timeout, DuckDB memory cap, rows and bytes returned to the model, and
   * how many queries (sandboxes) run at once in one process (DuckDB works on libuv's thread pool).
   */
  SQL_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  SQL_MEMORY_MB: z.coerce.number().int().min(16).max(4096).default(256),
  SQL_MAX_ROWS: z.coerce.number().int().min(1).max(10_000).default(200),
  SQL_MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(64 * 1024),
  SQL_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),

  /** Local stack only: HTTP port and where state persists. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATA_DIR: z.string().min(1).default(".local"),
});

export type Config = z.infer<typeof Settings>;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  // Without zod's compiled fast path (new Function per object schema, built on its first parse):
  // the settings are parsed once a cold start, so compiling the parser costs more than it saves.
  const parsed = Settings.safeParse(cleaned, { jitless: true });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  return parsed.data;
}

/** For settings only some deployments need: fails naming the setting. */
export function required<K extends keyof Config>(config: Config, key: K): NonNullable<Config[K]> {
  const value = config[key];
  if (value === undefined || value === null) throw new ConfigError(`Missing configuration: ${String(key)} must be set`);
  return value as NonNullable<Config[K]>;
}
