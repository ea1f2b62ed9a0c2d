import { parseWebhookHosts } from "../../shared/webhooks";
import { loadConfig } from "../../shared/config";
import type { Construct } from "constructs";

/**
 * Deploy-time settings, from CDK context (`cdk deploy -c bedrockModelId=...` or cdk.json).
 * Each is documented in the README's Deploying section. A production deployment must name its
 * model, embedding model, Supabase project and OIDC issuer: synth fails listing every one that is
 * missing, rather than deploying a stack that answers with stand-ins or 500s. `demo=true` deploys
 * the offline stand-ins on purpose.
 */
export interface StackSettings {
  /** Resource and stack name prefix, so staging and production can share an account. */
  stage?: string;
  /** Deploy the offline stand-ins (rule-based model, hashing embedder) on purpose. */
  demo?: boolean;
  /** Bedrock chat model: an inference profile id (us./eu./apac./jp./au./global.) or a base model id. */
  bedrockModelId?: string;
  bedrockEmbeddingModelId?: string;
  /** A lighter model for naming sessions; unset uses the chat model. */
  bedrockNamingModelId?: string;
  /** Region the functions call Bedrock in; unset: the stack's region. */
  bedrockRegion?: string;
  /** Embedding width; `npm run db:embedding-dimension` sets the migrations' columns to match. */
  embeddingDimension?: number;
  /** https://<project>.supabase.co; unset (demo only): no memory, knowledge base or transcripts. */
  supabaseUrl?: string;
  /** The Secrets Manager secret holding the Supabase service-role key. */
  supabaseSecretArn?: string;
  checkpointTtlDays?: number;
  /** The OIDC provider whose JWTs the API accepts. Unset (demo only): API keys only. */
  oidcIssuer?: string;
  oidcAudience?: string;
  /** JWT users whose `adminClaim` (default cognito:groups) holds `adminGroup` administer the knowledge base. */
  adminGroup?: string;
  adminClaim?: string;
  /** The settings new sessions start with, per project: {"<project>": {"memory": false}, "*": {...}}. */
  projectSettings?: string;
  /** Per-user limits, JSON {"turnsPerMinute": 10, "tokensPerDay": 200000}: the functions' USER_QUOTAS. */
  userQuotas?: string;
  /** Days a session may stay idle before it is erased everywhere (SESSION_RETENTION_DAYS); unset: kept. */
  sessionRetentionDays?: number;
  /** hosts a run's completion webhook may name (WEBHOOK_HOSTS); none unless given */
  webhookHosts?: string[];
  /** The Intercom admin (bot) the support agent replies as; setting it turns the Intercom agent on. */
  intercomAdminId?: string;
  /** Whether the Intercom webhook, queue and worker are deployed. */
  intercom?: boolean;
  /** X-Ray tracing of the API and functions. */
  tracing?: boolean;
  /** Bundle LangSmith's client, for tracing to LangSmith (LANGSMITH_TRACING and its key are then yours to set). */
  langsmith?: boolean;
  /** Key prefix of the documents to ingest from the bucket. */
  documentsPrefix: string;
  /** Deploy the web playground on CloudFront; its users sign in with the OIDC issuer. */
  playground?: boolean;
  /** The issuer's public app client (no secret) the playground signs in as; unset: `oidcAudience`. */
  playgroundClientId?: string;
  /** The scopes the playground asks for, space-separated; default "openid email". */
  playgroundScopes?: string;
  /** More origins the playground may call (its CSP's connect-src), e.g. a custom sign-in domain. */
  playgroundConnectSources?: string[];
  /** Browser origins allowed to call the API (CORS); none unless given. */
  corsOrigins?: string[];
  /** Server-to-server clients, each given an API key under the clients' usage plan. */
  apiKeys?: Array<{ client: string; trusted: boolean }>;
  /** Most concurrent invocations of each queue consumer (Lambda allows 2 to 1000). */
  queueConcurrency?: number;
  /** Days before an attachment (a session's uploaded file) expires from its bucket; default 30. */
  attachmentsExpireDays?: number;
  /** Where alarm notifications are emailed (an SNS subscription to confirm). */
  alarmEmail?: string;
  /** Longest chat message in UTF-8 bytes, enforced by API Gateway's model and the handlers alike. */
  maxMessageBytes?: number;
  /** recall_memory's cosine floor and extraction's duplicate threshold, for the deployed embedder. */
  memoryMinScore?: number;
  memoryDuplicateThreshold?: number;
}

/** Queue consumers' concurrency when `queueConcurrency` is not given. */
export const DEFAULT_QUEUE_CONCURRENCY = 5;

/**
 * Thresholds for Titan Text Embeddings v2 (1024 dimensions), used when the embedding model is a
 * Titan model and the context names none. They are NOT measured in this repository (it has no
 * Bedrock access): they are starting points from Titan v2's normalized cosine scores, where
 * unrelated short sentences score around 0.1-0.3 and paraphrases above 0.85. Calibrate them for
 * your data with `npm run bench -- retrieval` run with BEDROCK_EMBEDDING_MODEL_ID and AWS
 * credentials set, which prints the same sweep as for the hashing stand-in, and pass the chosen
 * values as `memoryMinScore` / `memoryDuplicateThreshold`.
 */
export const TITAN_THRESHOLDS = { memoryMinScore: 0.3, memoryDuplicateThreshold: 0.9 } as const;

/** What each production setting is for, as synth names it when missing. */
export const REQUIRED_SETTINGS = {
  bedrockModelId:
    "the Bedrock chat model: an inference profile id such as us.anthropic.claude-sonnet-4-5-20250929-v1:0",
  bedrockEmbeddingModelId: "the Bedrock embedding model, e.g. amazon.titan-embed-text-v2:0",
  supabaseUrl: "your Supabase project's URL, https://<project-ref>.supabase.co",
  supabaseSecretArn: "ARN of the Secrets Manager secret holding the Supabase service-role key",
  oidcIssuer: "the OIDC issuer whose JWTs the API accepts, e.g. https://cognito-idp.<region>.amazonaws.com/<pool-id>",
  oidcAudience: "the audience (app client id) those JWTs carry",
  intercomAdminId: "the Intercom admin id the support agent replies as (Intercom is on)",
} as const;

/**
 * A context value the functions read as the setting `env`, checked at synth as they will check it
 * at init: a bad value fails here, naming the context key.
 */
function checkedSetting(key: string, env: "PROJECT_SETTINGS" | "USER_QUOTAS", value: string | undefined) {
  if (value === undefined) return undefined;
  try {
    loadConfig({ [env]: value });
  } catch (err) {
    throw new SettingsError(`${key}: ${(err as Error).message.replace(`Invalid configuration: ${env}: `, "")}`);
  }
  return value;
}

/** The context's webhookHosts: host names (with an optional port), comma-separated. */
function webhookHosts(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const hosts = parseWebhookHosts(value);
  const bad = hosts.find((h) => !/^[a-z0-9.-]+(:\d{1,5})?$/.test(h));
  if (bad !== undefined) throw new SettingsError(`webhookHosts: "${bad}" is not a host name (with an optional port)`);
  return hosts;
}

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsError";
  }
}

export function readSettings(scope: Construct): StackSettings {
  const get = (key: string) => {
    const v = scope.node.tryGetContext(key);
    return v === undefined || v === "" ? undefined : String(v).trim();
  };
  const demo = flag("demo", get("demo"));
  const intercomAdminId = get("intercomAdminId");
  const intercom = flag("intercom", get("intercom")) ?? intercomAdminId !== undefined;
  const settings: StackSettings = {
    stage: stageName(get("stage")),
    demo,
    apiKeys: parseApiKeys(get("apiKeys")),
    corsOrigins: origins("corsOrigins", get("corsOrigins"), true),
    playground: flag("playground", get("playground")) ?? false,
    playgroundClientId: get("playgroundClientId"),
    playgroundScopes: scopes(get("playgroundScopes")),
    playgroundConnectSources: origins("playgroundConnectSources", get("playgroundConnectSources"), false),
    bedrockModelId: modelId("bedrockModelId", get("bedrockModelId")),
    bedrockEmbeddingModelId: modelId("bedrockEmbeddingModelId", get("bedrockEmbeddingModelId")),
    bedrockNamingModelId: modelId("bedrockNamingModelId", get("bedrockNamingModelId")),
    bedrockRegion: region(get("bedrockRegion")),
    embeddingDimension: wholeNumber("embeddingDimension", get("embeddingDimension"), 1, 2000),
    supabaseUrl: httpsUrl("supabaseUrl", get("supabaseUrl")),
    supabaseSecretArn: secretArn("supabaseSecretArn", get("supabaseSecretArn")),
    checkpointTtlDays: wholeNumber("checkpointTtlDays", get("checkpointTtlDays"), 1, 3650),
    documentsPrefix: get("documentsPrefix") ?? "knowledge/",
    queueConcurrency: wholeNumber("queueConcurrency", get("queueConcurrency"), 2, 1000) ?? DEFAULT_QUEUE_CONCURRENCY,
    intercom,
    intercomAdminId,
    oidcIssuer: httpsUrl("oidcIssuer", get("oidcIssuer")),
    attachmentsExpireDays: wholeNumber("attachmentsExpireDays", get("attachmentsExpireDays"), 1, 3650),
    oidcAudience: get("oidcAudience"),
    adminGroup: get("adminGroup"),
    adminClaim: get("adminClaim") ?? (get("adminGroup") ? "cognito:groups" : undefined),
    projectSettings: checkedSetting("projectSettings", "PROJECT_SETTINGS", get("projectSettings")),
    userQuotas: checkedSetting("userQuotas", "USER_QUOTAS", get("userQuotas")),
    sessionRetentionDays: wholeNumber("sessionRetentionDays", get("sessionRetentionDays"), 1, 36_500),
    webhookHosts: webhookHosts(get("webhookHosts")),
    tracing: flag("tracing", get("tracing")) ?? false,
    langsmith: flag("langsmith", get("langsmith")) ?? false,
    alarmEmail: email(get("alarmEmail")),
    maxMessageBytes: wholeNumber("maxMessageBytes", get("maxMessageBytes"), 256, 256 * 1024),
    memoryMinScore: fraction("memoryMinScore", get("memoryMinScore"), -1),
    memoryDuplicateThreshold: fraction("memoryDuplicateThreshold", get("memoryDuplicateThreshold"), 0),
  };
  const missing = missingSettings(settings);
  if (missing.length > 0) throw new SettingsError(missingMessage(missing));
  checkPlayground(settings);
  return settings;
}

/** The playground signs its users in with the API's own issuer, so it cannot go without one. */
export function checkPlayground(settings: StackSettings): void {
  if (!settings.playground) return;
  if (!(settings.oidcIssuer && settings.oidcAudience))
    throw new SettingsError(
      "playground=true needs oidcIssuer and oidcAudience: the playground signs its users in with that issuer (see the README's Playground section)",
    );
  // Cognito's ID token, the one the page can send, names the client it was issued to as its
  // audience: any other client's tokens would all be refused by the authorizer.
  const client = settings.playgroundClientId;
  if (client && client !== settings.oidcAudience && new URL(settings.oidcIssuer).hostname.startsWith("cognito-idp."))
    throw new SettingsError(
      `playgroundClientId ${client} differs from oidcAudience ${settings.oidcAudience}: with Cognito the API accepts only the audience's ID tokens, so the playground must sign in as that app client (leave playgroundClientId unset)`,
    );
}

/** The production settings a deployment lacks; a demo needs none, and Intercom's only when it is on. */
export function missingSettings(settings: StackSettings): Array<keyof typeof REQUIRED_SETTINGS> {
  const keys = Object.keys(REQUIRED_SETTINGS) as Array<keyof typeof REQUIRED_SETTINGS>;
  return keys.filter((key) =>
    key === "intercomAdminId"
      ? settings.intercom && !settings.intercomAdminId
      : !settings.demo && settings[key] === undefined,
  );
}

function missingMessage(missing: Array<keyof typeof REQUIRED_SETTINGS>): string {
  return [
    `This deployment is missing ${missing.length} setting${missing.length === 1 ? "" : "s"} (pass each as -c key=value, or put it under "context" in cdk.json):`,
    ...missing.map((key) => `  - ${key}: ${REQUIRED_SETTINGS[key]}`),
    "To deploy the offline stand-ins on purpose instead (a demo: no Bedrock, answers by rule), pass -c demo=true.",
  ].join("\n");
}

/** The memory thresholds the functions get: the context's, else Titan's for a Titan embedder, else the code's defaults. */
export function memoryThresholds(settings: StackSettings): {
  memoryMinScore?: number;
  memoryDuplicateThreshold?: number;
} {
  const titan: Partial<typeof TITAN_THRESHOLDS> = settings.bedrockEmbeddingModelId?.startsWith("amazon.titan-embed")
    ? TITAN_THRESHOLDS
    : {};
  return {
    memoryMinScore: settings.memoryMinScore ?? titan.memoryMinScore,
    memoryDuplicateThreshold: settings.memoryDuplicateThreshold ?? titan.memoryDuplicateThreshold,
  };
}

/** `billing:trusted,reports`: client names, `:trusted` marking those that may name the user. */
function parseApiKeys(value: string | undefined): StackSettings["apiKeys"] {
  if (value === undefined) return undefined;
  return value.split(",").map((entry) => {
    const match = /^([A-Za-z0-9_-]{1,64})(:trusted)?$/.exec(entry.trim());
    if (!match)
      throw new SettingsError(
        `context apiKeys: "${entry}" is not a client name (letters, digits, - and _), optionally followed by :trusted`,
      );
    return { client: match[1]!, trusted: match[2] !== undefined };
  });
}

function wholeNumber(key: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new SettingsError(`context ${key} must be a whole number from ${min} to ${max}, got ${value}`);
  return n;
}

function fraction(key: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > 1)
    throw new SettingsError(`context ${key} must be a number from ${min} to 1, got ${value}`);
  return n;
}

/** Comma-separated origins (scheme://host[:port]), or "*" for any where `anyAllowed`. */
function origins(key: string, value: string | undefined, anyAllowed: boolean): string[] | undefined {
  if (value === undefined) return undefined;
  const origins = value.split(",").map((o) => o.trim());
  for (const origin of origins) {
    if (origin === "*" && anyAllowed) continue;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || url.origin !== origin || !/^https?:$/.test(url.protocol))
      throw new SettingsError(
        `context ${key}: "${origin}" is not an origin such as https://app.example.com${anyAllowed ? ", or *" : ""}`,
      );
  }
  return origins;
}

/** OAuth scope tokens (RFC 6749 §3.3), space-separated; the page asks for these at sign-in. */
function scopes(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const list = value.split(/\s+/).filter(Boolean);
  if (!list.includes("openid") || list.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)))
    throw new SettingsError(`context playgroundScopes must be space-separated scopes including openid, got ${value}`);
  return list.join(" ");
}

function flag(key: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new SettingsError(`context ${key} must be true or false, got ${value}`);
}

function stageName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(value))
    throw new SettingsError(
      `context stage must be lower-case letters, digits and -, starting with a letter, at most 20 characters, got ${value}`,
    );
  return value;
}

function httpsUrl(key: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(`context ${key} must be an https URL, got ${value}`);
  }
  if (url.protocol !== "https:") throw new SettingsError(`context ${key} must be an https URL, got ${value}`);
  if (/your-project|example\.com$/.test(url.hostname) && key === "supabaseUrl")
    throw new SettingsError(`context ${key} is the README's placeholder (${value}): give your project's URL`);
  return value;
}

function secretArn(key: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/.test(value))
    throw new SettingsError(
      `context ${key} must be a Secrets Manager secret ARN (arn:aws:secretsmanager:…), got ${value}`,
    );
  return value;
}

function modelId(key: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+[a-zA-Z0-9.:_-]*$/.test(value) || value.startsWith("arn:"))
    throw new SettingsError(
      `context ${key} must be a Bedrock model id or inference profile id (e.g. us.anthropic.claude-sonnet-4-5-20250929-v1:0), got ${value}`,
    );
  return value;
}

function region(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(value))
    throw new SettingsError(`context bedrockRegion must be an AWS region such as us-east-1, got ${value}`);
  return value;
}

function email(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
    throw new SettingsError(`context alarmEmail must be an email address, got ${value}`);
  return value;
}
