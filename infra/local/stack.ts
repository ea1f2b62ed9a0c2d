// First: streaming handlers call the runtime's `awslambda` global as they load.
import { isStreaming } from "./awslambda";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { PGlite } from "@electric-sql/pglite";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { Backends } from "../../shared/backends";
import { IntercomStandIn, LOCAL_ADMIN_ID, localIntercomFetch } from "./intercom";
import { createCheckpointTable, DynamoDBSaver } from "../../graph/checkpoint";
import { supportGraphShape } from "../../graph/support/graph";
import { loadConfig } from "../../shared/config";
import { corsHeaders, isLoopbackHost, LOOPBACK, parseOrigins, preflightHeaders } from "../../shared/cors";
import { createIdempotencyTable } from "../../shared/idempotency";
import { createChatModel } from "../../shared/models/chat-model";
import { createEmbeddings } from "../../shared/models/embeddings";
import { RpcUserData } from "../../shared/stores/user-data";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { RpcConversationStore } from "../../shared/stores/rpc-conversations";
import type { Wiring } from "../../shared/wiring";
import { deployedFunctions, queueSettings, type FunctionSpec, type QueueName } from "../manifest";
import { grantedBackends } from "./granted-backends";
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
import { LocalCronScheduler } from "./cron-scheduler";
import { restoreQueuedWork } from "./restore";
import { workerDocumentProcessor } from "./document-worker";
import { knownDocuments, LOCAL_BUCKET, watchDropFolder, type DropFolder } from "./drop-folder";
import { FolderFileObjects, localAttachmentsDir } from "./uploads";
import { invokeAsync } from "./async-invoke";
import { workerDataEngine } from "./data-worker";
import { requestOrigin, withRequestOrigin } from "./request-origin";
import { IntercomCustomer } from "./intercom-customer";
import { SupportRuns } from "./support-runs";
import { servePlayground } from "./playground-server";
import { sendJson } from "./send-json";
import { errorBody } from "../../shared/http";
import { FolderObjectSource } from "../../shared/ingest/object-source";
import type { Context, S3Event, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { closeServer } from "./close-server";

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
    runs: LocalQueue;
    runsDeadLetters: LocalQueue;
    webhooks: LocalQueue;
    webhooksDeadLetters: LocalQueue;
  };
  intercom: IntercomStandIn;
  /** what the HTTP server routes to which function, with each function's timeout */
  routes: Array<Pick<Route, "name" | "method" | "resource" | "timeoutMs">>;
  /** the local documents bucket */
  dropDir: string;
  /** resolves once the drop folder's boot scan has sent what changed while the stack was stopped */
  dropFolderReconciled: Promise<void>;
  /** one line per backend, saying which is in use */
  describe: string[];
  /** the Supabase stand-in, for tests that read what its tables hold (an erasure's scan) */
  postgres: PGlite;
  /** the DynamoDB stand-in every function's client talks to */
  dynamo: LocalDynamo;
  /** each function's own DynamoDB client (granted-backends.ts), for benches that count its requests */
  functionDynamo: ReadonlyMap<string, DynamoDBClient>;
  /** EventBridge Scheduler's stand-in: tests fire what came due without waiting for the clock */
  crons: LocalCronScheduler;
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
    // Pages from this machine may call the local stack (it has no authorizer: the caller names the
    // user), a web page from anywhere else may not; `*` opens it to any. AWS allows none by default.
    CORS_ORIGINS: LOOPBACK,
    // Completion webhooks to this machine's own servers; AWS allows none unless the deployment names hosts.
    WEBHOOK_HOSTS: "localhost,127.0.0.1",
    // dynalite updates its indexes in the same write: an erasure has no index lag to wait out.
    USER_INDEX_LAG_MS: "0",
    ...env,
    AUTH_MODE: "local",
  });
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });

  let dynamo: LocalDynamo | undefined;
  const functionDynamo = new Map<string, DynamoDBClient>();
  let postgres: PGlite | undefined;
  let server: Server | undefined;
  // The queues as the stack deploys them (infra/manifest.ts): its visibility timeouts, batch sizes
  // and receive counts, then their dead-letter queues.
  const localQueue = (name: QueueName) => {
    const settings = queueSettings(name);
    return queueWithDeadLetters(name === "extraction" ? "memory-extraction" : name, {
      visibilityTimeoutMs: settings.visibilityTimeoutSeconds * 1000,
      batchSize: settings.batchSize,
      maxReceiveCount: settings.maxReceives,
      functionTimeoutMs: settings.consumerTimeoutSeconds * 1000,
    });
  };
  const { queue: extraction, deadLetters: extractionDeadLetters } = localQueue("extraction");
  const { queue: ingest, deadLetters: ingestDeadLetters } = localQueue("ingest");
  const { queue: support, deadLetters: supportDeadLetters } = localQueue("support");
  const { queue: runs, deadLetters: runsDeadLetters } = localQueue("runs");
  const { queue: webhooks, deadLetters: webhooksDeadLetters } = localQueue("webhooks");
  const queues: Record<QueueName, LocalQueue> = { extraction, ingest, support, runs, webhooks };
  // EventBridge Scheduler's stand-in: each firing into the run worker's queue.
  const crons = new LocalCronScheduler(runs);
  const intercom = new IntercomStandIn({ stateFile: join(dataDir, "intercom.json") });
  let watcher: DropFolder | undefined;
  // Documents are extracted on a worker thread, so a large one cannot stall the API.
  const documentProcessor = workerDocumentProcessor();
  // Data files are read by DuckDB in child processes of their own, so a runaway query cannot either.
  const dataEngine = workerDataEngine({ dir: localAttachmentsDir(dataDir), threads: config.SQL_CONCURRENCY });
  const timers: NodeJS.Timeout[] = [];
  const close = async () => {
    for (const timer of timers) clearInterval(timer);
    crons.stop();
    await watcher?.close();
    await Promise.all([extraction.stop(), ingest.stop(), support.stop(), runs.stop(), webhooks.stop()]);
    await documentProcessor.close();
    await dataEngine.close();
    if (server) await closeServer(server);
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
    const dropDir = join(dataDir, "drop");
    let url = "";
    const backends: Backends = {
      config,
      dynamo: dynamo.client,
      conversations: new RpcConversationStore(sqlRpc(postgres)),
      store: new RpcAgentStore(sqlRpc(postgres)),
      userData: new RpcUserData(sqlRpc(postgres)),
      extractionQueue: extraction,
      supportQueue: support,
      runsQueue: runs,
      webhooksQueue: webhooks,
      cronScheduler: crons,
      documents: new FolderObjectSource(dropDir),
      // The attachments bucket: a folder, with presigned-style upload and download URLs on this server
      // (on the origin the request came in on: localhost and 127.0.0.1 alike).
      // Written once, as the S3 bucket is: a file's checked bytes cannot be replaced.
      files: new FolderFileObjects(localAttachmentsDir(dataDir), () => requestOrigin(url), "/_local/files/", {
        writeOnce: true,
      }),
      // The documents bucket as admins manage it: the drop folder, with the same kind of URLs.
      knowledge: {
        bucket: LOCAL_BUCKET,
        prefix: "",
        objects: new FolderFileObjects(dropDir, () => requestOrigin(url), "/_local/documents/"),
      },
      documentProcessor,
      // The data function's stand-in: DuckDB on worker threads of its own (data-worker.ts).
      dataEngine,
      // The worker reaches the stand-in over HTTP, as it reaches Intercom.
      intercomFetch: localIntercomFetch(config.INTERCOM_API_URL, () => `${url}/_local/intercom/api`),
    };
    // Every function of the manifest, built by its own createHandler on these stand-ins, exactly
    // as Lambda builds it on AWS's; there is no authorizer locally (shared/identity.ts).
    // Each function gets what its grants give it in AWS, no more (granted-backends.ts), with a
    // DynamoDB client of its own (kept for benches that count a function's requests).
    const wiringOf = (fn: FunctionSpec): Wiring => {
      const granted = grantedBackends(fn, backends, dynamo!.endpoint);
      functionDynamo.set(fn.name, granted.dynamo);
      return { config: () => config, backends: async () => granted };
    };
    const routes: Route[] = [];
    for (const fn of deployedFunctions({ intercom: true })) {
      // No authorizer locally (shared/identity.ts); the data function's stand-in is the pool above.
      if (fn.kind === "authorizer" || fn.kind === "engine") continue;
      const module = (await import(`../../functions/${fn.name}.ts`)) as { createHandler(wiring: Wiring): unknown };
      const handler = module.createHandler(wiringOf(fn));
      // A completed local upload tells the upload function, as the bucket's notification does in
      // AWS: asynchronously, a failed invocation retried twice.
      if (fn.kind === "upload")
        (backends.files as FolderFileObjects).onUpload = (key) =>
          void invokeAsync(() => (handler as (event: S3Event) => Promise<void>)(uploadEvent(key)), {
            onFailure: (err) => console.error("upload notification failed", err),
          });
      // A scheduled function runs on a timer, as EventBridge runs it in AWS (a sweep's failure is logged, the next runs).
      if (fn.kind === "schedule") {
        const run = handler as () => Promise<unknown>;
        const timer = setInterval(
          () => void run().catch((err) => console.error(`${fn.name} failed`, err)),
          (fn.everyMinutes ?? 60) * 60_000,
        );
        timer.unref();
        timers.push(timer);
      }
      if (fn.source)
        queues[fn.source.queue].start(
          handler as (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>,
        );
      for (const route of fn.routes ?? [])
        routes.push({
          name: fn.name,
          method: route.method,
          resource: route.path,
          handler: handler as ProxyHandler | StreamingHandler,
          timeoutMs: fn.timeoutSeconds * 1000,
        });
    }
    watcher = watchDropFolder(dropDir, ingest, {
      seed: EXAMPLES_DIR,
      known: await knownDocuments(backends.store!),
      maxBytes: config.INGEST_MAX_BYTES,
    });
    const [model, embeddings] = await Promise.all([createChatModel(config), createEmbeddings(config)]);
    // A local-only route the playground uses beside the API: a customer writing in to Intercom
    // (the stand-in plus its signed webhook notification).
    const customer = new IntercomCustomer(intercom, {
      clientSecret: config.INTERCOM_CLIENT_SECRET!,
      webhookUrl: () => `${url}/webhooks/intercom`,
    });
    // And what the support agent did on a conversation, hop by hop, read from the worker's checkpoints.
    const supportRuns = new SupportRuns(
      intercom,
      supportGraphShape(new DynamoDBSaver({ client: dynamo.client, tableName: config.CHECKPOINT_TABLE })),
    );

    const origins = parseOrigins(config.CORS_ORIGINS);
    server = createServer((req, res) => {
      // Pages from this machine only (LOOPBACK): by the name they were served under too.
      if (origins.includes(LOOPBACK) && !isLoopbackHost(req.headers.host))
        return sendJson(
          res,
          421,
          errorBody("host_not_allowed", "the local stack answers localhost, 127.0.0.1 and [::1] only"),
        );
      // Each stand-in answers its own errors; this is the net under them all: a request that still
      // fails is that request's 500, never a rejection that ends the process (Node's default).
      withRequestOrigin(req, async () => {
        const at = new URL(req.url ?? "/", "http://localhost");
        if (servePlayground(req, res, at)) return;
        if (await customer.handle(req, res, at)) return;
        if (await supportRuns.handle(req, res, at)) return;
        if (await intercom.handle(req, res, at)) return;
        if (await (backends.files as FolderFileObjects).handle(req, res, at)) return;
        if (await (backends.knowledge!.objects as FolderFileObjects).handle(req, res, at)) return;
        await serve(routes, req, res, origins);
      }).catch((err: unknown) => {
        if (req.destroyed) return void res.destroy();
        console.error("local stack: request failed", err);
        sendJson(res, 500, errorBody("internal_error", "the local stack failed to answer this request"));
      });
    });
    await new Promise<void>((r, reject) => {
      server!.once("error", reject);
      server!.listen(config.PORT, "127.0.0.1", () => r());
    });
    const { port } = server.address() as AddressInfo;
    url = `http://localhost:${port}`;
    await restoreQueuedWork(dynamo.client, config.CHECKPOINT_TABLE, { crons, runsQueue: runs });
    return {
      url: `http://localhost:${port}`,
      queues: {
        extraction,
        extractionDeadLetters,
        ingest,
        ingestDeadLetters,
        support,
        supportDeadLetters,
        runs,
        runsDeadLetters,
        webhooks,
        webhooksDeadLetters,
      },
      routes: routes.map(({ name, method, resource, timeoutMs }) => ({ name, method, resource, timeoutMs })),
      intercom,
      dropDir,
      dropFolderReconciled: watcher.reconciled,
      postgres,
      dynamo,
      functionDynamo,
      crons,
      describe: [
        `http: API Gateway stand-in on http://localhost:${port}`,
        `playground: http://localhost:${port}/ (infra/playground)`,
        `dynamodb: dynalite (local stand-in) at ${dynamo.endpoint}, table ${config.CHECKPOINT_TABLE}`,
        `postgres: PGlite + pgvector (local stand-in for Supabase), migrations from supabase/migrations`,
        `sqs: in-process queues memory-extraction, ingest, support, runs and webhooks (3 receives, then their -dlq)`,
        `s3: drop folder ${dropDir} (add, change or delete files to ingest them)`,
        `intercom: stand-in at http://localhost:${port}/_local/intercom (POST /conversations, GET /actions, GET /conversations/{id}/run)`,
        `intercom webhook: http://localhost:${port}/webhooks/intercom, client secret "${config.INTERCOM_CLIENT_SECRET}"`,
        model.description,
        embeddings.description,
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
  origins: string[],
) {
  const url = new URL(req.url ?? "/", "http://localhost");
  // The gateway's own answers carry CORS headers, as API Gateway's gateway responses do
  // (infra/aws/stack.ts): a browser client reads an unrouted 404 or a 405 instead of a CORS failure.
  const error = (status: number, code: string, message: string) =>
    sendProxyResult(res, {
      statusCode: status,
      headers: { "content-type": "application/json", ...corsHeaders(origins, req.headers.origin) },
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
    // CORS preflights are answered by the gateway, as API Gateway's preflight (OPTIONS) methods are.
    if (req.method === "OPTIONS")
      return sendProxyResult(res, {
        statusCode: 204,
        headers: preflightHeaders(origins, req.headers.origin),
        body: "",
      });
    const match = matches.find((m) => m.route.method === req.method);
    if (!match) return error(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname}`);
    const body = await readBody(req);
    if (body === undefined) return error(413, "payload_too_large", "request body is over API Gateway's 10 MB limit");
    const event = proxyEvent(req, url, body, match.route.resource, match.params!);
    if (isStreaming(match.route.handler)) {
      const stream = responseStream(res);
      await (match.route.handler as StreamingHandler)(
        event,
        stream,
        lambdaContext(match.route.name, match.route.timeoutMs),
      );
      if (!stream.writableEnded) stream.end();
      return;
    }
    const result = await (match.route.handler as ProxyHandler)(
      event,
      lambdaContext(match.route.name, match.route.timeoutMs),
    );
    if (!result) return error(502, "bad_gateway", "the handler returned no response");
    sendProxyResult(res, result);
  } catch (err) {
    if (err instanceof MalformedPath) return error(400, "invalid_path", err.message);
    // The client left mid-body: there is no one to answer, and nothing reached a function.
    if (req.destroyed && !res.headersSent) return void res.destroy();
    // What API Gateway answers when the function itself crashes.
    console.error(err);
    if (!res.headersSent) error(502, "bad_gateway", "internal server error");
  }
}

/** The S3 ObjectCreated notification for a key, as the bucket sends it (keys URL-encoded). */
const uploadEvent = (key: string) =>
  ({ Records: [{ s3: { object: { key: encodeURIComponent(key) } } }] }) as unknown as S3Event;
