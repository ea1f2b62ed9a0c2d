/**
 * The deployment manifest: every function, declared once. The AWS stack (infra/aws), the local
 * stack (infra/local) and the cold-start bench all read it, so they cannot disagree on a route,
 * a queue's settings or a timeout. Adding a function is its handler (functions/<name>.ts, exporting
 * `createHandler`) plus one entry here; docs/adding-a-function.md walks through it.
 *
 * Plain data only: the stack imports it at synth, and must not load any handler's code to do so.
 */

// SQS moves a message to its dead-letter queue after MAX_RECEIVES receives, in AWS and locally;
// the consumers count those records as they fail their last receive (shared/sqs-batch.ts).
import { MAX_RECEIVES } from "../shared/sqs-batch";
export { MAX_RECEIVES };

/** What a function may touch. Each grant is an IAM permission in AWS and an environment value. */
export type Grant =
  /** the checkpoint table: graph state, session owners and leases */
  | "checkpoints"
  /** Powertools idempotency records and once-markers */
  | "idempotency"
  /** add to users' usage items in the checkpoint table (USAGE_ITEM_PREFIX keys; UpdateItem only): tokens spent outside a turn */
  | "usage"
  /** the Supabase service-role key */
  | "supabase"
  /** the chat, naming and embedding models (streaming included) */
  | "bedrock-chat"
  /** the embedding model only */
  | "bedrock-embeddings"
  /** send to a queue */
  | "send:extraction"
  | "send:support"
  | "send:runs"
  | "send:webhooks"
  /** make and remove crons' schedules (EventBridge Scheduler's group, its role passed) */
  | "crons"
  /** remove crons' schedules only (an erasure): no schedule made, no role passed */
  | "crons:remove"
  /** read the documents bucket's prefix */
  | "documents"
  /** put and delete under the documents bucket's prefix (the knowledge admin routes) */
  | "documents:admin"
  /** the attachments bucket's users/ prefix: put, get and delete (presigning, checking uploads) */
  | "attachments"
  /** read attachments (the data tools, images sent to the model) and add the images a message carries inline */
  | "attachments:chat"
  /** delete attachments (a session's files go with it) */
  | "attachments:delete"
  /** read attachments and nothing else: the data function */
  | "attachments:read"
  /** invoke the data function (functions/data.ts): DuckDB over the data files */
  | "invoke:data"
  /** list and delete a user's whole folder of attachments (erasure, retention) */
  | "attachments:erase"
  /** the Intercom secrets, each to the function that needs it */
  | "intercom-token"
  | "intercom-client-secret";

export type QueueName = "extraction" | "ingest" | "support" | "runs" | "webhooks";

export interface HttpRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";
  /** API Gateway resource path, `{id}` for a path parameter */
  path: string;
  /** answered by Lambda response streaming (the integration then waits as long as the function) */
  streaming?: boolean;
  /** the body is checked at the gateway against the chat request's JSON Schema model */
  chatBody?: boolean;
  /** no JWT: the function checks the caller itself (the Intercom webhook's signature) */
  public?: boolean;
  /**
   * The caller may also send its API key in `x-api-key`, as LangGraph's SDK does. API Gateway can
   * cache an authorizer's decision on one header only, so these routes use an uncached REQUEST
   * authorizer (the same function), which reads either header on every request.
   */
  apiKeyHeader?: boolean;
}

/** The Agent Server API's routes: what @langchain/langgraph-sdk's Client calls, its x-api-key accepted. */
const sdkRoutes = (routes: HttpRoute[]): HttpRoute[] => routes.map((route) => ({ ...route, apiKeyHeader: true }));

export interface QueueSource {
  queue: QueueName;
  batchSize: number;
  maxBatchingWindowSeconds?: number;
}

export interface FunctionSpec {
  /** functions/<name>.ts; the construct is <Name>Function */
  name: string;
  /**
   * "api": behind routes; "consumer": fed by a queue; "authorizer": the API's JWT authorizer;
   * "upload": told of each object uploaded to the attachments bucket; "engine": invoked by the
   * other functions only (no route, no queue)
   */
  kind: "api" | "consumer" | "authorizer" | "upload" | "engine" | "schedule";
  /** a "schedule" function: how often it runs (an EventBridge rule in AWS, a timer locally) */
  everyMinutes?: number;
  timeoutSeconds: number;
  memoryMB: number;
  routes?: HttpRoute[];
  source?: QueueSource;
  grants: Grant[];
  /** deployed only with this feature on */
  feature?: "intercom";
  /** what the handler imports on its first request instead of at init (shared/deferred.ts) */
  defers?: string;
  /**
   * A native module its code ships with (infra/aws/bundle/native.ts): DuckDB's binding is Linux
   * x64's, so the function runs on x86_64 instead of Graviton. Only the data function has one;
   * every other function runs on arm64, and a bundle that ships native code its manifest entry
   * does not declare fails the build.
   */
  native?: "duckdb";
}

/** A queue's visibility timeout is this many times its consumer's timeout (AWS's advice for Lambda). */
export const VISIBILITY_FACTOR = 6;

/**
 * What running the chat graph for the Agent Server API needs, whichever function runs it: its
 * state and owner records, Supabase, the model, memory extraction, completion webhooks, and the
 * session's files (the data tools by the data function, images read and stored).
 */
const RUNS_THE_AGENT: Grant[] = [
  "checkpoints",
  "supabase",
  "bedrock-chat",
  "send:extraction",
  "send:webhooks",
  "attachments:chat",
  "invoke:data",
];

export const FUNCTIONS: readonly FunctionSpec[] = [
  {
    name: "chat",
    kind: "api",
    timeoutSeconds: 29, // API Gateway's limit for a buffered response
    memoryMB: 1024,
    routes: [{ method: "POST", path: "/api/chat", chatBody: true }],
    grants: ["checkpoints", "supabase", "bedrock-chat", "send:extraction", "attachments:chat", "invoke:data"],
    defers: "the agent graph, LangChain, Bedrock and the store clients",
  },
  {
    name: "chat-stream",
    kind: "api",
    timeoutSeconds: 120,
    memoryMB: 1024,
    routes: [{ method: "POST", path: "/api/chat/stream", streaming: true, chatBody: true }],
    grants: ["checkpoints", "supabase", "bedrock-chat", "send:extraction", "attachments:chat", "invoke:data"],
    defers: "the agent graph, LangChain, Bedrock and the store clients",
  },
  {
    name: "sessions",
    kind: "api",
    timeoutSeconds: 10,
    memoryMB: 512,
    routes: [
      { method: "GET", path: "/api/sessions" },
      { method: "GET", path: "/api/sessions/{id}" },
      { method: "GET", path: "/api/sessions/{id}/messages" },
      { method: "PATCH", path: "/api/sessions/{id}" },
      { method: "DELETE", path: "/api/sessions/{id}" },
    ],
    grants: ["checkpoints", "supabase", "attachments:delete"],
    defers: "the store clients, and the checkpoint saver for deletes",
  },
  {
    name: "memories",
    kind: "api",
    timeoutSeconds: 10,
    memoryMB: 512,
    routes: [
      { method: "GET", path: "/api/memories" },
      { method: "DELETE", path: "/api/memories/{id}" },
    ],
    grants: ["supabase"],
    defers: "the store client",
  },
  {
    name: "files",
    kind: "api",
    timeoutSeconds: 29,
    memoryMB: 1024,
    routes: [
      { method: "POST", path: "/api/sessions/{id}/files" },
      { method: "GET", path: "/api/sessions/{id}/files" },
      { method: "DELETE", path: "/api/sessions/{id}/files/{file_id}" },
      { method: "POST", path: "/api/sessions/{id}/files/{file_id}/complete" },
      { method: "GET", path: "/api/files/{file_id}" },
    ],
    grants: ["checkpoints", "attachments", "invoke:data"],
    defers: "the S3 client and the file inspection",
  },
  {
    name: "file-uploaded",
    kind: "upload",
    timeoutSeconds: 60,
    memoryMB: 1024,
    grants: ["checkpoints", "attachments", "invoke:data"],
    defers: "the S3 client and the file inspection",
  },
  {
    // DuckDB over a session's data files: upload checks and the data tools invoke it. Its memory,
    // measured by `npm run bench -- data-files` (2026-11-27): a process answering a query over a
    // 7.4 MB CSV peaks at 169 MB resident (77 MB of it Node and the engine at start); DuckDB itself
    // is capped at SQL_MEMORY_MB (256). 1024 MB holds both with the files' bytes (FILES_MAX_BYTES each, read
    // one at a time) and Lambda's CPU share at this size keeps a load of 100k rows near 120 ms.
    name: "data",
    native: "duckdb",
    kind: "engine",
    timeoutSeconds: 30,
    memoryMB: 1024,
    grants: ["attachments:read"],
  },
  {
    // The knowledge base as its admins manage it (functions/knowledge.ts)
    name: "knowledge",
    kind: "api",
    timeoutSeconds: 29,
    memoryMB: 512,
    routes: [
      { method: "GET", path: "/api/knowledge/documents" },
      { method: "GET", path: "/api/knowledge/documents/{source}" },
      { method: "DELETE", path: "/api/knowledge/documents/{source}" },
      { method: "POST", path: "/api/knowledge/uploads" },
      { method: "GET", path: "/api/knowledge/search" },
    ],
    grants: ["supabase", "documents:admin", "bedrock-embeddings"],
    defers: "the store and S3 clients, and the search tool with its embedder",
  },
  {
    name: "me",
    kind: "api",
    timeoutSeconds: 29, // API Gateway's limit: an erasure answers once it is complete (docs/user-data.md)
    memoryMB: 512,
    routes: [
      { method: "GET", path: "/api/me/usage" },
      { method: "GET", path: "/api/me/export" },
      { method: "DELETE", path: "/api/me" },
      { method: "DELETE", path: "/api/admin/users/{id}" },
    ],
    // crons:remove: an erasure removes the user's crons' schedules, which name the user.
    grants: ["checkpoints", "supabase", "attachments:erase", "crons:remove"],
    defers: "the store clients, and LangGraph's checkpoint package for an erasure",
  },
  {
    name: "session-retention",
    kind: "schedule",
    everyMinutes: 60,
    timeoutSeconds: 300,
    memoryMB: 512,
    grants: ["checkpoints", "supabase", "attachments:delete"],
    defers: "the store clients and LangGraph's checkpoint package",
  },
  {
    name: "health",
    kind: "api",
    timeoutSeconds: 10,
    memoryMB: 256,
    routes: [{ method: "GET", path: "/api/health/deep" }],
    grants: ["checkpoints", "supabase"],
    defers: "the store clients",
  },
  {
    // The LangGraph Agent Server API (threads, assistants, state, runs that answer when done)
    name: "agent-server",
    kind: "api",
    timeoutSeconds: 29, // API Gateway's limit for a buffered response: /runs/wait is a whole turn
    memoryMB: 1024,
    routes: sdkRoutes([
      { method: "GET", path: "/ok" },
      { method: "GET", path: "/info" },
      { method: "POST", path: "/assistants" },
      { method: "POST", path: "/assistants/search" },
      { method: "POST", path: "/assistants/count" },
      { method: "GET", path: "/assistants/{assistant_id}" },
      { method: "PATCH", path: "/assistants/{assistant_id}" },
      { method: "DELETE", path: "/assistants/{assistant_id}" },
      { method: "POST", path: "/assistants/{assistant_id}/versions" },
      { method: "POST", path: "/assistants/{assistant_id}/latest" },
      { method: "GET", path: "/assistants/{assistant_id}/graph" },
      { method: "GET", path: "/assistants/{assistant_id}/schemas" },
      { method: "POST", path: "/threads" },
      { method: "POST", path: "/threads/search" },
      { method: "POST", path: "/threads/count" },
      { method: "GET", path: "/threads/{thread_id}" },
      { method: "PATCH", path: "/threads/{thread_id}" },
      { method: "DELETE", path: "/threads/{thread_id}" },
      { method: "POST", path: "/threads/{thread_id}/copy" },
      { method: "GET", path: "/threads/{thread_id}/state" },
      { method: "POST", path: "/threads/{thread_id}/state" },
      { method: "POST", path: "/threads/{thread_id}/state/checkpoint" },
      { method: "GET", path: "/threads/{thread_id}/state/{checkpoint_id}" },
      { method: "POST", path: "/threads/{thread_id}/history" },
      { method: "POST", path: "/threads/{thread_id}/runs/wait" },
      { method: "GET", path: "/threads/{thread_id}/runs/{run_id}" },
      { method: "DELETE", path: "/threads/{thread_id}/runs/{run_id}" },
      { method: "POST", path: "/threads/{thread_id}/runs" },
      { method: "GET", path: "/threads/{thread_id}/runs" },
      { method: "POST", path: "/threads/{thread_id}/runs/crons" },
      { method: "POST", path: "/runs/crons" },
      { method: "POST", path: "/runs/crons/search" },
      { method: "POST", path: "/runs/crons/count" },
      { method: "PATCH", path: "/runs/crons/{cron_id}" },
      { method: "DELETE", path: "/runs/crons/{cron_id}" },
      { method: "POST", path: "/threads/{thread_id}/runs/{run_id}/cancel" },
      { method: "POST", path: "/runs/wait" },
      { method: "PUT", path: "/store/items" },
      { method: "GET", path: "/store/items" },
      { method: "DELETE", path: "/store/items" },
      { method: "POST", path: "/store/items/search" },
      { method: "POST", path: "/store/namespaces" },
    ]),
    // Also: hands background runs to the worker, manages crons, and DELETE /threads/{id} removes the
    // thread's files with it.
    grants: [...RUNS_THE_AGENT, "send:runs", "crons", "attachments:delete"],
    defers: "the agent graph, LangChain, Bedrock and the store clients",
  },
  {
    name: "agent-server-stream",
    kind: "api",
    timeoutSeconds: 120,
    memoryMB: 1024,
    routes: sdkRoutes([
      { method: "POST", path: "/threads/{thread_id}/runs/stream", streaming: true },
      { method: "POST", path: "/runs/stream", streaming: true },
      { method: "GET", path: "/threads/{thread_id}/runs/{run_id}/stream", streaming: true },
      // Answered when the run is over: as long as this function may wait, not API Gateway's 29 s.
      { method: "GET", path: "/threads/{thread_id}/runs/{run_id}/join", streaming: true },
    ]),
    grants: RUNS_THE_AGENT,
    defers: "the agent graph, LangChain, Bedrock and the store clients",
  },
  {
    // Background runs (runs.create): the Agent Server API's runs that outlive their request, up to
    // Lambda's 15 minutes, their events into the run's log (graph/agent-server/background.ts).
    name: "run-worker",
    kind: "consumer",
    timeoutSeconds: 900,
    memoryMB: 1024,
    // One run per invocation: a batch would share one 15-minute limit.
    source: { queue: "runs", batchSize: 1 },
    // Also: a cron's firing whose thread or cron is gone removes its schedule.
    grants: [...RUNS_THE_AGENT, "crons"],
    defers: "the agent graph, LangChain, Bedrock and the store clients",
  },
  {
    // A finished run's completion webhook, to a host the deployment allows, retried with backoff
    // (5 s, 20 s, 80 s, 320 s) and then dead-lettered.
    name: "webhook-sender",
    kind: "consumer",
    timeoutSeconds: 30,
    memoryMB: 256,
    source: { queue: "webhooks", batchSize: 10 },
    grants: ["send:webhooks"],
  },
  {
    name: "memory-extraction",
    kind: "consumer",
    timeoutSeconds: 60,
    memoryMB: 1024,
    source: { queue: "extraction", batchSize: 10, maxBatchingWindowSeconds: 2 },
    grants: ["idempotency", "usage", "supabase", "bedrock-chat"],
  },
  {
    name: "ingest",
    kind: "consumer",
    timeoutSeconds: 120,
    memoryMB: 1536,
    source: { queue: "ingest", batchSize: 5 },
    grants: ["supabase", "bedrock-embeddings", "documents"],
  },
  {
    name: "intercom-webhook",
    kind: "api",
    timeoutSeconds: 10,
    memoryMB: 512,
    routes: [
      { method: "POST", path: "/webhooks/intercom", public: true },
      { method: "HEAD", path: "/webhooks/intercom", public: true },
    ],
    grants: ["idempotency", "send:support", "intercom-client-secret"],
    feature: "intercom",
  },
  {
    name: "support-worker",
    kind: "consumer",
    timeoutSeconds: 120,
    memoryMB: 1024,
    source: { queue: "support", batchSize: 5 },
    grants: ["checkpoints", "idempotency", "supabase", "bedrock-chat", "intercom-token"],
    feature: "intercom",
  },
  {
    name: "authorizer",
    kind: "authorizer",
    timeoutSeconds: 5,
    memoryMB: 256,
    grants: [],
  },
];

/** The function that consumes a queue: its timeout sets the queue's visibility timeout. */
export function consumerOf(queue: QueueName): FunctionSpec {
  const fn = FUNCTIONS.find((f) => f.source?.queue === queue);
  if (!fn) throw new Error(`no function consumes the ${queue} queue`);
  return fn;
}

/** A queue's settings, as SQS gets them in AWS and the local queue gets them locally. */
export function queueSettings(queue: QueueName) {
  const consumer = consumerOf(queue);
  return {
    consumerTimeoutSeconds: consumer.timeoutSeconds,
    visibilityTimeoutSeconds: consumer.timeoutSeconds * VISIBILITY_FACTOR,
    maxReceives: MAX_RECEIVES,
    batchSize: consumer.source!.batchSize,
  };
}

/** The functions a deployment has, given its features. */
export function deployedFunctions(features: { intercom: boolean }): FunctionSpec[] {
  return FUNCTIONS.filter((f) => f.feature === undefined || (f.feature === "intercom" && features.intercom));
}

/** PascalCase construct id: chat-stream -> ChatStreamFunction. */
export function constructId(name: string): string {
  return `${name.replace(/(^|-)(\w)/g, (_, _dash: string, c: string) => c.toUpperCase())}Function`;
}
