import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import type { Writable } from "node:stream";
import * as z from "../shared/zod";
import { agentServerErrorResponse, malformedId } from "../graph/agent-server/errors";
import { guardThread } from "../graph/agent-server/guard";
import { JoinStreamQuery, lastEventId, MAX_REQUEST_BYTES, RunCreate } from "../graph/agent-server/requests";
import { joinRun, sseFrame } from "../graph/agent-server/run-join";
import { joinRunResult } from "../graph/agent-server/background";
import { deletesItsThread, executeRun } from "../graph/agent-server/runs";
import { type AgentServer, deferredAgentServer } from "../graph/agent-server/runtime";
import type { Config } from "../shared/config";
import { corsHeadersFor, parseOrigins } from "../shared/cors";
import { runDeadline } from "../shared/deadline";
import { AppError, asAppError } from "../shared/errors";
import { parseJsonBody, parseQuery, standInHeaders } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("agent-server-stream");

/** One server-sent event, `id:` (counted from 0), `event: <name>` and a JSON `data:`. */
function sendEvent(stream: Writable, name: string, data: unknown, id?: number) {
  if (!stream.writableEnded && !stream.destroyed) stream.write(sseFrame(name, data, id));
}

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" };

function sendError(stream: Writable, err: unknown, cors: Record<string, string>) {
  const app = asAppError(err);
  if (app.status >= 500) logger.error("run failed before it started", { error: err });
  // LangGraph's wording beside the project's codes, as the JSON routes answer (functions/agent-server.ts).
  const response = agentServerErrorResponse(app, cors);
  awslambda.HttpResponseStream.from(stream, {
    statusCode: response.statusCode,
    headers: response.headers as Record<string, string>,
  }).end(response.body);
}

/**
 * POST /threads/{thread_id}/runs/stream and stateless POST /runs/stream: a run as the platform
 * streams it, `event: metadata` with the run id first, then `event: <mode>` per chunk in the
 * modes asked for (graph/agent-server/run-stream.ts), `event: error` if the run fails, then the
 * end of the response; every frame has its `id:`. A run asking `stream_resumable` also writes its
 * events to the run's log (shared/stores/run-events.ts) and says where to rejoin (`Location`), so a
 * client that drops reconnects with `Last-Event-ID`; the run goes on without it either way.
 * GET /threads/{thread_id}/runs/{run_id}/stream is that rejoin (joinStream). A run refused before
 * it starts (bad input, unknown thread, busy under multitask_strategy reject) is a plain JSON
 * error with its status. Wrapped by hand, as chat-stream.ts is, so the invocation lasts until the
 * run is saved.
 */
export function createAgentServerStreamHandler(config: Config, server: () => Promise<AgentServer>) {
  const origins = parseOrigins(config.CORS_ORIGINS);
  return async (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => {
    logger.addContext(context);
    const cors = corsHeadersFor(origins, event.headers);
    let sse: Writable | undefined;
    const open = (headers: Record<string, string>) => {
      sse = awslambda.HttpResponseStream.from(responseStream, {
        statusCode: 200,
        headers: { ...SSE_HEADERS, ...headers, ...standInHeaders(config), ...cors },
      });
      return sse;
    };
    try {
      const ready = await server();
      const userId = callerId(event, config.AUTH_MODE);
      const threadId = event.pathParameters?.thread_id;
      // Ownership before effect, as every thread route (functions/agent-server.ts): first, for anyone but the owner.
      if (event.resource.includes("{thread_id}")) await guardThread(ready, userId, event);
      if (event.resource.endsWith("/join"))
        return await join(ready, event, userId, threadId!, context, responseStream, cors);
      if (event.httpMethod === "GET") await rejoin(ready, event, threadId!, context, open);
      else await run(ready, event, { userId, threadId, deadline: runDeadline(context) }, open);
    } catch (err) {
      if (!sse) return sendError(responseStream, err, cors);
      logger.error("stream failed", { error: err });
      const app = asAppError(err);
      sendEvent(sse, "error", { error: app.code, message: app.message, code: app.code });
    } finally {
      logger.resetKeys();
    }
    if (sse && !sse.destroyed) sse.end();
  };
}

type Open = (headers: Record<string, string>) => Writable;

async function run(
  ready: AgentServer,
  event: APIGatewayProxyEvent,
  caller: { userId: string; threadId?: string; deadline?: number },
  open: Open,
) {
  const body = parseJsonBody(event, RunCreate, { maxBytes: MAX_REQUEST_BYTES });
  let sse: Writable | undefined;
  let log: ReturnType<AgentServer["events"]["writer"]> | undefined;
  let next = 0;
  let runId: string | undefined;
  const emit = (name: string, data: unknown) => {
    if (!sse) return;
    // A resumable run's ids are its log's, so a rejoin picks up after the last one the client saw.
    const id = log ? log.push(name, data) : next++;
    sendEvent(sse, name, data, id);
  };
  try {
    await executeRun(ready.runDeps, caller, body, {
      started: (started) => {
        runId = started.run_id;
        const path = `/threads/${started.thread_id}/runs/${started.run_id}`;
        if (body.stream_resumable) log = ready.events.writer(started.run_id);
        sse = open({ "content-location": path, ...(log ? { location: `${path}/stream` } : {}) });
        emit("metadata", { run_id: started.run_id, attempt: 1 });
      },
      event: emit,
    });
  } finally {
    // The log's end, once the run's outcome is saved: a rejoining client stops there. A stateless
    // run's thread is gone by now, its logs with it: this one, written after, goes too.
    await log?.close().catch((error: unknown) => logger.error("run log not written", { error }));
    if (log && runId && deletesItsThread(caller, body))
      await ready.events.remove(runId).catch((error: unknown) => logger.error("run log not removed", { error }));
  }
}

/** joinStream: the run's kept events after the client's Last-Event-ID, then live until it ends. */
async function rejoin(ready: AgentServer, event: APIGatewayProxyEvent, threadId: string, context: Context, open: Open) {
  parseQuery(event, JoinStreamQuery);
  const runId = RunId.safeParse(event.pathParameters?.run_id);
  if (!runId.success) throw malformedId("run_id");
  const after = lastEventId(headerOf(event, "last-event-id"));
  // Following ends before the function's time does; the response is then cut, not ended, so the
  // client reconnects with its Last-Event-ID (an ended stream would read as the run's end).
  const deadline = AbortSignal.timeout(Math.max(1000, context.getRemainingTimeInMillis() - 2000));
  // An unknown run is a plain 404; a known one's response begins at once, even while it waits its turn.
  const run = await ready.runs.get(threadId, runId.data);
  if (!run) throw new AppError(404, "run_not_found", "Run not found");
  const path = `/threads/${threadId}/runs/${runId.data}`;
  const sse = open({ "content-location": path, location: `${path}/stream` });
  for await (const item of joinRun(ready, run, after, deadline)) sendEvent(sse, item.event, item.data, item.id);
  if (deadline.aborted) sse.destroy();
}

/**
 * runs.join: the thread's values once the run is over. On the streaming function, so it may wait
 * as long as this function runs rather than API Gateway's 29 s for a buffered answer; still going
 * then, it is a 408 the client repeats.
 */
async function join(
  ready: AgentServer,
  event: APIGatewayProxyEvent,
  userId: string,
  threadId: string,
  context: Context,
  responseStream: Writable,
  cors: Record<string, string>,
) {
  const runId = RunId.safeParse(event.pathParameters?.run_id);
  if (!runId.success) throw malformedId("run_id");
  const values = await joinRunResult(ready, userId, threadId, runId.data, {
    deadline: Date.now() + Math.max(1000, context.getRemainingTimeInMillis() - 2000),
  });
  awslambda.HttpResponseStream.from(responseStream, {
    statusCode: 200,
    headers: { "content-type": "application/json", ...standInHeaders(ready.config), ...cors },
  }).end(JSON.stringify(values));
}

const RunId = z.uuid();

const headerOf = (event: APIGatewayProxyEvent, name: string) =>
  Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "POST /threads/{thread_id}/runs/stream": { path: z.object({ thread_id: z.uuid() }), body: RunCreate },
  "POST /runs/stream": { body: RunCreate },
  "GET /threads/{thread_id}/runs/{run_id}/join": { path: z.object({ thread_id: z.uuid(), run_id: z.uuid() }) },
  "GET /threads/{thread_id}/runs/{run_id}/stream": {
    path: z.object({ thread_id: z.uuid(), run_id: z.uuid() }),
    query: JoinStreamQuery,
  },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  awslambda.streamifyResponse(createAgentServerStreamHandler(config(), deferredAgentServer(logger, backends)));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
