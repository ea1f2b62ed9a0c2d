// First: streaming handlers call the runtime's `awslambda` global as they load.
import { isStreaming } from "./awslambda";
import type { PGlite } from "@electric-sql/pglite";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { createChatHandler } from "../../functions/chat";
import { createChatStreamHandler } from "../../functions/chat-stream";
import { buildChatRuntime } from "../../graph/chat/runtime";
import type { Backends } from "../../shared/backends";
import { createExtractionHandler } from "../../functions/memory-extraction";
import { createMemoriesHandler } from "../../functions/memories";
import { createIntercomWebhookHandler, webhookDeps } from "../../functions/intercom-webhook";
import { createSupportWorker } from "../../functions/support-worker";
import { buildSupportRuntime } from "../../graph/support/runtime";
import { IntercomStandIn, LOCAL_ADMIN_ID } from "./intercom";
import { createSessionsHandler } from "../../functions/sessions";
import { createCheckpointTable } from "../../graph/checkpoint";
import { loadConfig } from "../../shared/config";
import { buildExtractionRuntime } from "../../graph/memory/runtime";
import { createIdempotencyTable } from "../../shared/idempotency";
import { SqlAgentStore } from "../../shared/stores/sql-agent-store";
import { SqlConversationStore } from "../../shared/stores/sql-conversations";
import {
  lambdaContext,
  MalformedPath,
  matchResource,
  proxyEvent,
  readBody,
  responseStream,
  sendProxyResult,
  type ProxyHandler,
  type Route,
  type StreamingHandler,
} from "./api-gateway";
import { startLocalDynamo, type LocalDynamo } from "./dynamo";
import { startLocalPostgres } from "./postgres";
import { queueWithDeadLetters, type LocalQueue } from "./queue";
import { watchDropFolder } from "./drop-folder";
import { createIngestHandler } from "../../functions/ingest";
import { FolderObjectSource } from "../../shared/ingest/object-source";
import { buildIngestRuntime } from "../../shared/ingest/runtime";
import type { FSWatcher } from "chokidar";

const EXAMPLES_DIR = resolve(import.meta.dirname, "../../examples/knowledge");

export interface LocalStack {
  url: string;
  queues: {
    extraction: LocalQueue;
    extractionDeadLetters: LocalQueue;
    ingest: LocalQueue;
    ingestDeadLetters: LocalQueue;
    support: LocalQueue;
    supportDeadLetters: LocalQueue;
  };
  intercom: IntercomStandIn;
  /** the local documents bucket */
  dropDir: string;
  /** one line per backend, saying which is in use */
  describe: string[];
  close(): Promise<void>;
}

/**
 * The whole system on one machine: dynalite for DynamoDB, PGlite for Supabase, and an
 * HTTP server that turns requests into API Gateway proxy events for the same handlers
 * Lambda runs. State persists under DATA_DIR.
 */
export async function startLocalStack(env: Record<string, string | undefined> = process.env): Promise<LocalStack> {
  // There is no authorizer locally: the caller names the user (see shared/identity.ts).
  // Intercom is the stand-in below, with a known development secret unless one is given.
  const config = loadConfig({
    INTERCOM_CLIENT_SECRET: "local-dev-secret",
    INTERCOM_ACCESS_TOKEN: "local-token",
    INTERCOM_ADMIN_ID: LOCAL_ADMIN_ID,
    ...env,
    AUTH_MODE: "local",
  });
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });

  let dynamo: LocalDynamo | undefined;
  let postgres: PGlite | undefined;
  let server: Server | undefined;
  // The queues as the stack deploys them: 3 receives, then their dead-letter queue.
  const { queue: extraction, deadLetters: extractionDeadLetters } = queueWithDeadLetters(
    "memory-extraction",
    10_000,
    10,
  );
  const { queue: ingest, deadLetters: ingestDeadLetters } = queueWithDeadLetters("ingest", 30_000, 5);
  const { queue: support, deadLetters: supportDeadLetters } = queueWithDeadLetters("support", 30_000, 5);
  const intercom = new IntercomStandIn();
  let watcher: FSWatcher | undefined;
  const close = async () => {
    await watcher?.close();
    await Promise.all([extraction.stop(), ingest.stop(), support.stop()]);
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server?.closeAllConnections();
    await postgres?.close();
    await dynamo?.close();
  };

  try {
    [dynamo, postgres] = await Promise.all([
      startLocalDynamo({ path: join(dataDir, "dynamodb") }),
      startLocalPostgres(join(dataDir, "postgres")),
    ]);
    await Promise.all([
      createCheckpointTable(dynamo.client, config.CHECKPOINT_TABLE),
      createIdempotencyTable(dynamo.client, config.IDEMPOTENCY_TABLE),
    ]);
    const backends: Backends = {
      config,
      dynamo: dynamo.client,
      conversations: new SqlConversationStore(postgres),
      store: new SqlAgentStore(postgres),
      extractionQueue: extraction,
    };
    const runtime = await buildChatRuntime(backends);
    const extractionRuntime = await buildExtractionRuntime(backends);
    extraction.start(createExtractionHandler(async () => extractionRuntime));
    const dropDir = join(dataDir, "drop");
    const ingestRuntime = await buildIngestRuntime(backends, new FolderObjectSource(dropDir));
    ingest.start(createIngestHandler(async () => ingestRuntime));
    watcher = watchDropFolder(dropDir, ingest, EXAMPLES_DIR);
    let url = "";
    // The worker reaches the stand-in over HTTP, as it reaches Intercom.
    const supportRuntime = await buildSupportRuntime(
      { ...backends, config: { ...config, INTERCOM_API_URL: "http://placeholder" } },
      (input, init) => fetch(String(input).replace("http://placeholder", `${url}/_local/intercom/api`), init),
    );
    support.start(createSupportWorker(async () => supportRuntime));
    const webhook = createIntercomWebhookHandler(webhookDeps(backends, support));
    const memories = createMemoriesHandler(() => backends);
    const sessions = createSessionsHandler(() => backends);
    const routes: Route[] = [
      {
        name: "chat",
        method: "POST",
        resource: "/api/chat",
        handler: createChatHandler(runtime.config, async () => runtime),
      },
      {
        name: "chat-stream",
        method: "POST",
        resource: "/api/chat/stream",
        handler: awslambda.streamifyResponse(
          createChatStreamHandler(runtime.config, async () => runtime),
        ) as unknown as StreamingHandler,
      },
      { name: "sessions", method: "GET", resource: "/api/sessions", handler: sessions },
      { name: "sessions", method: "GET", resource: "/api/sessions/{id}/messages", handler: sessions },
      { name: "sessions", method: "DELETE", resource: "/api/sessions/{id}", handler: sessions },
      { name: "intercom-webhook", method: "POST", resource: "/webhooks/intercom", handler: webhook },
      { name: "intercom-webhook", method: "HEAD", resource: "/webhooks/intercom", handler: webhook },
      { name: "memories", method: "GET", resource: "/api/memories", handler: memories },
      { name: "memories", method: "DELETE", resource: "/api/memories/{id}", handler: memories },
    ];

    server = createServer((req, res) => {
      void (async () => {
        if (await intercom.handle(req, res, new URL(req.url ?? "/", "http://localhost"))) return;
        await serve(routes, req, res);
      })();
    });
    await new Promise<void>((r, reject) => {
      server!.once("error", reject);
      server!.listen(config.PORT, "127.0.0.1", () => r());
    });
    const { port } = server.address() as AddressInfo;
    url = `http://localhost:${port}`;
    return {
      url: `http://localhost:${port}`,
      queues: { extraction, extractionDeadLetters, ingest, ingestDeadLetters, support, supportDeadLetters },
      intercom,
      dropDir,
      describe: [
        `http: API Gateway stand-in on http://localhost:${port}`,
        `dynamodb: dynalite (local stand-in) at ${dynamo.endpoint}, table ${config.CHECKPOINT_TABLE}`,
        `postgres: PGlite + pgvector (local stand-in for Supabase), migrations from supabase/migrations`,
        `sqs: in-process queues memory-extraction, ingest and support (3 receives, then their -dlq)`,
        `s3: drop folder ${dropDir} (add, change or delete files to ingest them)`,
        `intercom: stand-in at http://localhost:${port}/_local/intercom (POST /conversations, GET /actions)`,
        `intercom webhook: http://localhost:${port}/webhooks/intercom, client secret "${config.INTERCOM_CLIENT_SECRET}"`,
        ...runtime.descriptions,
        `data: ${dataDir}`,
      ],
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function serve(
  routes: Route[],
  req: import("node:http").IncomingMessage,
  res: import("node:http").ServerResponse,
) {
  const url = new URL(req.url ?? "/", "http://localhost");
  const error = (status: number, code: string, message: string) =>
    sendProxyResult(res, {
      statusCode: status,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ error: { code, message } }),
    });
  try {
    if (url.pathname === "/health")
      return sendProxyResult(res, {
        statusCode: 200,
        headers: { "content-type": "application/json" },
        body: '{"status":"ok"}',
      });
    const matches = routes
      .map((route) => ({ route, params: matchResource(route.resource, url.pathname) }))
      .filter((m) => m.params);
    if (matches.length === 0) return error(404, "not_found", `no route for ${url.pathname}`);
    const match = matches.find((m) => m.route.method === req.method);
    if (!match) return error(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname}`);
    const body = await readBody(req);
    if (body === undefined) return error(413, "payload_too_large", "request body is over API Gateway's 10 MB limit");
    const event = proxyEvent(req, url, body, match.route.resource, match.params!);
    if (isStreaming(match.route.handler)) {
      const stream = responseStream(res);
      await (match.route.handler as StreamingHandler)(event, stream, lambdaContext(match.route.name));
      if (!stream.writableEnded) stream.end();
      return;
    }
    const result = await (match.route.handler as ProxyHandler)(event, lambdaContext(match.route.name));
    if (!result) return error(502, "bad_gateway", "the handler returned no response");
    sendProxyResult(res, result);
  } catch (err) {
    if (err instanceof MalformedPath) return error(400, "invalid_path", err.message);
    // What API Gateway answers when the function itself crashes.
    console.error(err);
    if (!res.headersSent) error(502, "bad_gateway", "internal server error");
  }
}
