import * as z from "./zod";
import { UserQuotas } from "./quotas";
import { ProjectSettings } from "./session-settings";

/**
 * Every setting, in one place, read from the environment. A setting that is set is validated at
 * startup, so a bad value fails with the setting's name, not deep inside a request.
 *
 * Each setting's schema is built by a function, when the setting is set or first read: a function
 * reads a few of these 80 settings and its deployment sets about fifteen, and building all of them
 * (357 zod schemas and checks) was about 5 ms of every cold start (`npm run bench -- cold-start`).
 */
/** Longest accepted chat message by default, in UTF-8 bytes (MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024;

/** A setting holding a JSON object, parsed and checked against `schema`; "{}" when unset. */
const jsonSetting = <S extends z.ZodMiniType>(schema: S) =>
  z.pipe(
    z._default(z.string(), "{}"),
    z.transform((text, ctx): z.infer<S> => {
      try {
        const parsed = schema.safeParse(JSON.parse(text), { jitless: true }); // once a cold start (loadConfig)
        if (parsed.success) return parsed.data;
        ctx.issues.push({
          code: "custom",
          input: text,
          message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join(", "),
        });
      } catch {
        ctx.issues.push({ code: "custom", input: text, message: "must be a JSON object" });
      }
      return z.NEVER;
    }),
  );

const SETTINGS = {
  /** DynamoDB table holding graph checkpoints. */
  CHECKPOINT_TABLE: () => z._default(z.string().check(z.minLength(3), z.maxLength(255)), "agent-checkpoints"),
  /** Days after its last use a thread's checkpoints expire; unset keeps them. */
  CHECKPOINT_TTL_DAYS: () => z.optional(z.coerce.number().check(z.positive())),
  /** Hours a run's kept stream events (background and resumable runs) can be replayed; the table's TTL removes them. */
  RUN_EVENTS_TTL_HOURS: () => z._default(z.coerce.number().check(z.positive(), z.lte(24 * 30)), 24),

  /** Bedrock chat model (e.g. anthropic.claude-sonnet-4-5-20250929-v1:0); unset uses the offline stand-in. */
  BEDROCK_MODEL_ID: () => z.optional(z.string().check(z.minLength(1))),
  /** Bedrock embedding model; unset uses the hashing stand-in. Titan v2 is amazon.titan-embed-text-v2:0. */
  BEDROCK_EMBEDDING_MODEL_ID: () => z.optional(z.string().check(z.minLength(1))),
  /** Region for Bedrock calls; defaults to the function's AWS_REGION. */
  BEDROCK_REGION: () => z.optional(z.string().check(z.minLength(1))),
  /** Embedding width, shared by the model and the pgvector columns. Titan v2 offers 256, 512 or 1024. */
  EMBEDDING_DIM: () => z._default(z.coerce.number().check(z.int(), z.positive()), 1024),

  /**
   * recall_memory drops matches scoring below this cosine similarity. 0.15 is calibrated for the hashing
   * embedder on test/fixtures/memories.json (`npm run bench -- retrieval`); recalibrate for Titan.
   */
  MEMORY_MIN_SCORE: () => z._default(z.coerce.number().check(z.gte(-1), z.lte(1)), 0.15),

  /**
   * Extraction: a new fact at least this similar (cosine) to a stored memory is a duplicate.
   * Calibrated for the hashing embedder on test/fixtures/fact-pairs.json (`npm run bench -- retrieval`).
   */
  MEMORY_DUPLICATE_THRESHOLD: () => z._default(z.coerce.number().check(z.gte(0), z.lte(1)), 0.8),
  /** SQS queue the chat function hands each turn to for memory extraction; unset: no extraction. */
  EXTRACTION_QUEUE_URL: () => z.optional(z.url()),
  /** The run worker's queue (background runs of the Agent Server API); unset: runs.create is 503. */
  RUNS_QUEUE_URL: () => z.optional(z.url()),
  /** The webhook sender's queue (a run's completion webhook). */
  WEBHOOKS_QUEUE_URL: () => z.optional(z.url()),
  /** Crons on EventBridge Scheduler: the stack's schedule group, the role it sends with, the run worker's queue. */
  CRON_SCHEDULE_GROUP: () => z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  CRON_SCHEDULER_ROLE_ARN: () => z.optional(z.string().check(z.startsWith("arn:"))),
  CRON_TARGET_QUEUE_ARN: () => z.optional(z.string().check(z.startsWith("arn:"))),
  /** Hosts a run's `webhook` may name (comma-separated, each with an optional port); unset: none. */
  WEBHOOK_HOSTS: () => z.optional(z.string().check(z.maxLength(4096))),
  /** DynamoDB table of Powertools idempotency records (queue consumers). */
  IDEMPOTENCY_TABLE: () => z._default(z.string().check(z.minLength(3), z.maxLength(255)), "agent-idempotency"),

  /** Ingestion: documents over this size are skipped (logged, not retried). */
  INGEST_MAX_BYTES: () => z._default(z.coerce.number().check(z.int(), z.positive()), 10 * 1024 * 1024),
  /** Chunk size and overlap, in characters. */
  INGEST_CHUNK_SIZE: () => z._default(z.coerce.number().check(z.int(), z.gte(100)), 1000),
  INGEST_CHUNK_OVERLAP: () => z._default(z.coerce.number().check(z.int(), z.gte(0)), 150),
  /** Texts per embeddings call, and calls in flight per document. */
  INGEST_EMBED_BATCH: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(256)), 32),
  INGEST_EMBED_CONCURRENCY: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(32)), 4),
  /**
   * Bounds on one document (shared/documents/limits.ts): its extracted text, what a DOCX may
   * inflate to, PDF pages, chunks, and its whole processing time. A document over one is skipped
   * with the reason. 2000 chunks of 1000 characters is about 600 printed pages; the time bound
   * leaves a batch of 5 documents, processed in turn, inside the function's 120 s.
   */
  INGEST_MAX_TEXT_CHARS: () => z._default(z.coerce.number().check(z.int(), z.positive()), 4_000_000),
  INGEST_MAX_UNZIPPED_BYTES: () => z._default(z.coerce.number().check(z.int(), z.positive()), 32 * 1024 * 1024),
  INGEST_MAX_PDF_PAGES: () => z._default(z.coerce.number().check(z.int(), z.positive()), 2000),
  INGEST_MAX_CHUNKS: () => z._default(z.coerce.number().check(z.int(), z.positive()), 2000),
  INGEST_DOCUMENT_TIMEOUT_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(1000), z.lte(900_000)), 20_000),

  /** How long a message sent with if_busy "queue" waits for the session's previous run. */
  SESSION_QUEUE_WAIT_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(25_000)), 20_000),
  /**
   * How long a session lease lasts without a heartbeat (shared/stores/session-lease.ts); its holder
   * renews it every third of that, which is also how soon it sees a multitask_strategy interrupt.
   */
  SESSION_LEASE_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(3_000), z.lte(300_000)), 30_000),
  /** Browser origins allowed to call the API, comma-separated ("*": any); none by default (shared/cors.ts). */
  CORS_ORIGINS: () => z._default(z.string(), ""),
  /** The offline stand-in's pause between streamed words, so streaming is visible locally. */
  OFFLINE_STREAM_DELAY_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(1000)), 15),
  /** A lighter Bedrock model for naming sessions and long sessions' running summaries; unset uses BEDROCK_MODEL_ID. */
  BEDROCK_NAMING_MODEL_ID: () => z.optional(z.string().check(z.minLength(1))),
  /**
   * The most input tokens one chat model call is sent (graph/chat/context.ts); unset picks one
   * that fits the model (defaultContextBudget). Counted by shared/models/token-estimate.ts,
   * calibrated by the previous call's reported usage.
   */
  CONTEXT_TOKEN_BUDGET: () => z.optional(z.coerce.number().check(z.int(), z.gte(1000))),

  /** Intercom: API base URL, the bot admin that replies, and the app's secrets (env locally, Secrets Manager in AWS). */
  INTERCOM_API_URL: () => z._default(z.url(), "https://api.intercom.io"),
  INTERCOM_ADMIN_ID: () => z.optional(z.string().check(z.minLength(1))),
  INTERCOM_ACCESS_TOKEN: () => z.optional(z.string().check(z.minLength(1))),
  INTERCOM_ACCESS_TOKEN_SECRET_ARN: () => z.optional(z.string().check(z.minLength(1))),
  INTERCOM_CLIENT_SECRET: () => z.optional(z.string().check(z.minLength(1))),
  INTERCOM_CLIENT_SECRET_ARN: () => z.optional(z.string().check(z.minLength(1))),
  /** SQS queue between the Intercom webhook and the support worker. */
  SUPPORT_QUEUE_URL: () => z.optional(z.url()),
  /** An MCP server (Streamable HTTP) whose tools the support agent may also use. */
  SUPPORT_MCP_URL: () => z.optional(z.url()),
  SUPPORT_MAX_HOPS: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(5)), 2),
  SUPPORT_SNOOZE_MINUTES: () => z._default(z.coerce.number().check(z.int(), z.gte(1)), 60),

  /**
   * How long an erasure waits before it lists a user's sessions again, for new owner records to
   * reach the table's user index (a GSI, eventually consistent: usually well under a second).
   */
  USER_INDEX_LAG_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(5000)), 1000),
  /**
   * Largest export answered inline, in UTF-8 bytes: under Lambda's 6 MB response cap. A larger one
   * is written to the attachments bucket and answered as a download link (docs/user-data.md).
   */
  EXPORT_INLINE_MAX_BYTES: () => z._default(z.coerce.number().check(z.int(), z.gte(1024), z.lte(5_000_000)), 5_000_000),
  /**
   * Largest page of a session's history (GET /api/sessions/{id}/messages), in bytes as Lambda
   * counts its response: under its 6 MB cap. A longer history comes newest first in pages.
   */
  HISTORY_PAGE_MAX_BYTES: () => z._default(z.coerce.number().check(z.int(), z.gte(1024), z.lte(5_000_000)), 5_000_000),

  /** Longest accepted chat message, in UTF-8 bytes. */
  MAX_MESSAGE_BYTES: () => z._default(z.coerce.number().check(z.int(), z.positive()), DEFAULT_MAX_MESSAGE_BYTES),
  /** Graph steps per turn before the run is stopped (each model call and tool round is a step or two). */
  AGENT_RECURSION_LIMIT: () => z._default(z.coerce.number().check(z.int(), z.gte(3)), 12),
  /**
   * The settings new sessions start with, per project, as JSON: {"<project id>": {"memory": false},
   * "*": {...}} ("*" applies to every session, a project's entry over it). See shared/session-settings.ts.
   */
  PROJECT_SETTINGS: () => jsonSetting(ProjectSettings),
  /**
   * Per-user limits, as JSON: {"turnsPerMinute": 10, "tokensPerDay": 200000} (shared/quotas.ts).
   * Over one, a turn answers 429 quota_exceeded with Retry-After before any model call. Unset: none.
   */
  USER_QUOTAS: () => jsonSetting(UserQuotas),
  /**
   * Days a session may stay idle (no turn) before it is erased everywhere: state, transcript, files,
   * runs (graph/chat/retention.ts). Unset: sessions are kept until deleted.
   */
  SESSION_RETENTION_DAYS: () => z.optional(z.coerce.number().check(z.positive(), z.lte(36_500))),
  /**
   * Model ids declared without tool support (comma-separated): a session on one of them binds no
   * tools, and its prompt says it has none.
   */
  MODELS_WITHOUT_TOOLS: () =>
    z.pipe(
      z._default(z.string(), ""),
      z.transform((text) =>
        text
          .split(",")
          .map((m) => m.trim())
          .filter(Boolean),
      ),
    ),

  /**
   * Who the caller is. "authorizer": from API Gateway's authorizer context (AWS).
   * "local": from the body's user_id or an x-user-id header, for the local stack only.
   */
  AUTH_MODE: () => z._default(z.enum(["authorizer", "local"]), "authorizer"),

  /** The OIDC provider whose bearer JWTs the API's authorizer accepts (issuer, audience, and its JWKS). */
  OIDC_ISSUER: () => z.optional(z.url()),
  OIDC_AUDIENCE: () => z.optional(z.string().check(z.minLength(1))),
  /** Defaults to <issuer>/.well-known/jwks.json. */
  OIDC_JWKS_URL: () => z.optional(z.url()),
  /**
   * The knowledge base's admins: JWT users whose ADMIN_CLAIM (e.g. "cognito:groups") holds
   * ADMIN_GROUP (a list, or a space- or comma-separated string). Trusted API keys are admins too.
   */
  ADMIN_CLAIM: () => z.optional(z.string().check(z.minLength(1))),
  ADMIN_GROUP: () => z.optional(z.string().check(z.minLength(1))),
  /**
   * Set by the stack when API keys are on (`apiKeys` context): the secret holding the API key
   * JWT users are metered under. Its presence also lets the authorizer accept `ApiKey` tokens.
   */
  USERS_API_KEY_SECRET_ARN: () => z.optional(z.string().check(z.minLength(1))),
  /** Set by the stack with API keys on: its name; the authorizer knows only keys named `<stack>-<client>`. */
  API_KEY_STACK: () => z.optional(z.string().check(z.minLength(1))),

  /** Supabase project; required where the stores run over PostgREST (Lambda). */
  SUPABASE_URL: () => z.optional(z.url()),
  SUPABASE_SERVICE_ROLE_KEY: () => z.optional(z.string().check(z.minLength(1))),
  /** In AWS the key is not in the environment: this names the Secrets Manager secret holding it. */
  SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN: () => z.optional(z.string().check(z.minLength(1))),

  /** The documents bucket and prefix, for the knowledge admin routes (uploads and deletes); unset: none. */
  DOCUMENTS_BUCKET: () => z.optional(z.string().check(z.minLength(3))),
  DOCUMENTS_PREFIX: () => z._default(z.string(), "knowledge/"),
  /** Largest document an admin may upload through the API. */
  KNOWLEDGE_UPLOAD_MAX_BYTES: () => z._default(z.coerce.number().check(z.int(), z.positive()), 50 * 1024 * 1024),
  /** Attachments (files of a session): the S3 bucket; unset in AWS means no file routes or data tools. */
  ATTACHMENTS_BUCKET: () => z.optional(z.string().check(z.minLength(3))),
  /** The data function (functions/data.ts) the data tools and upload checks invoke; unset: none. */
  DATA_FUNCTION_NAME: () => z.optional(z.string().check(z.minLength(1))),
  /** Largest accepted file, files per session, rows loaded per data file. */
  FILES_MAX_BYTES: () => z._default(z.coerce.number().check(z.int(), z.positive()), 20 * 1024 * 1024),
  FILES_PER_SESSION: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(1000)), 20),
  FILES_MAX_ROWS: () => z._default(z.coerce.number().check(z.int(), z.gte(1)), 1_000_000),
  /** Images sent inline with a chat message (base64 in the body), in bytes once decoded, all together. */
  INLINE_IMAGES_MAX_BYTES: () =>
    z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(4 * 1024 * 1024)), 1024 * 1024),
  /** Lifetime of presigned upload and download URLs. */
  FILES_URL_TTL_SECONDS: () => z._default(z.coerce.number().check(z.int(), z.gte(30), z.lte(3600)), 900),
  /**
   * query_data: statement timeout, DuckDB memory cap, rows and bytes returned to the model, and
   * how many queries (sandboxes) run at once in one process (DuckDB works on libuv's thread pool).
   */
  SQL_TIMEOUT_MS: () => z._default(z.coerce.number().check(z.int(), z.gte(100), z.lte(60_000)), 5_000),
  SQL_MEMORY_MB: () => z._default(z.coerce.number().check(z.int(), z.gte(16), z.lte(4096)), 256),
  SQL_MAX_ROWS: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(10_000)), 200),
  SQL_MAX_RESULT_BYTES: () => z._default(z.coerce.number().check(z.int(), z.gte(1024), z.lte(1024 * 1024)), 64 * 1024),
  SQL_CONCURRENCY: () => z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(16)), 2),

  /** Local stack only: HTTP port and where state persists. */
  PORT: () => z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(65535)), 3000),
  DATA_DIR: () => z._default(z.string().check(z.minLength(1)), ".local"),
} satisfies Record<string, () => z.ZodMiniType>;

type Settings = typeof SETTINGS;
type Values = { [K in keyof Settings]: z.output<ReturnType<Settings[K]>> };
/** A setting whose value may be undefined may be left out, as zod's object types have it. */
export type Config = { [K in keyof Values as undefined extends Values[K] ? K : never]?: Values[K] } & {
  [K in keyof Values as undefined extends Values[K] ? never : K]: Values[K];
};

export class ConfigError extends Error {}

/** One setting's value from its raw text (undefined when unset), or its problems, each naming it. */
function parseSetting(key: keyof Settings, raw: string | undefined): { value: unknown } | { problems: string[] } {
  // Without zod's compiled fast path (new Function per object schema, built on its first parse):
  // a setting is parsed once a cold start, so compiling its parser would cost more than it saves.
  const parsed = SETTINGS[key]().safeParse(raw, { jitless: true });
  if (parsed.success) return { value: parsed.data };
  return { problems: parsed.error.issues.map((i) => `${[key, ...i.path].join(".")}: ${i.message}`) };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of Object.keys(SETTINGS) as (keyof Settings)[]) {
    const raw = env[key];
    // Empty strings count as unset, so `FOO= npm start` falls back to the default.
    if (raw !== undefined && raw !== "") {
      const parsed = parseSetting(key, raw);
      if ("value" in parsed) config[key] = parsed.value;
      else problems.push(...parsed.problems);
      continue;
    }
    // Unset: its default (or undefined), worked out when first read and kept.
    Object.defineProperty(config, key, {
      enumerable: true,
      configurable: true,
      get() {
        const parsed = parseSetting(key, undefined);
        // Unreachable while every setting is optional or has a valid default (config.unit.test.ts).
        if (!("value" in parsed)) throw new ConfigError(`Invalid configuration: ${parsed.problems.join("; ")}`);
        Object.defineProperty(config, key, { value: parsed.value, enumerable: true, writable: true });
        return parsed.value;
      },
      // Assigned before it was read (a test's override): the value it is given, as on any object.
      set(value: unknown) {
        Object.defineProperty(config, key, { value, enumerable: true, writable: true });
      },
    });
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  return config as Config;
}

/** For settings only some deployments need: fails naming the setting. */
export function required<K extends keyof Config>(config: Config, key: K): NonNullable<Config[K]> {
  const value = config[key];
  if (value === undefined || value === null) throw new ConfigError(`Missing configuration: ${String(key)} must be set`);
  return value as NonNullable<Config[K]>;
}
