import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import type { Writable } from "node:stream";
import * as z from "zod";
import { RunCreate } from "../graph/agent-server/requests";
import { executeRun } from "../graph/agent-server/runs";
import { type AgentServer, deferredAgentServer } from "../graph/agent-server/runtime";
import type { Config } from "../shared/config";
import { corsHeadersFor, parseOrigins } from "../shared/cors";
import { runDeadline } from "../shared/deadline";
import { AppError } from "../shared/errors";
import { errorAnswer, parseJsonBody, standInHeaders } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("agent-server-stream");

/** One server-sent event as the Agent Server API frames it: `event: <name>` and a JSON `data:`. */
function sendEvent(stream: Writable, name: string, data: unknown) {
  if (!stream.writableEnded && !stream.destroyed) stream.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

function sendError(stream: Writable, err: unknown, cors: Record<string, string>) {
  const app = err instanceof AppError ? err : undefined;
  if (!app || app.status >= 500) logger.error("run failed before it started", { error: err });
  const { status, body, headers } = errorAnswer(err);
  awslambda.HttpResponseStream.from(stream, {
    statusCode: status,
    headers: { "content-type": "application/json", ...headers, ...cors },
  }).end(JSON.stringify(body));
}

/**
 * POST /threads/{thread_id}/runs/stream and stateless POST /runs/stream: a run as the platform
 * streams it, `event: metadata` with the run id first, then `event: <mode>` per chunk in the
 * modes asked for (values, updates, messages for messages-tuple, custom), `event: error` if the
 * run fails, then the end of the response. A run refused before it starts (bad input, unknown
 * thread, busy under multitask_strategy reject) is a plain JSON error with its status. Wrapped
 * by hand, as chat-stream.ts is, so the invocation lasts until the run is saved.
 */
export function createAgentServerStreamHandler(config: Config, server: () => Promise<AgentServer>) {
  const origins = parseOrigins(config.CORS_ORIGINS);
  return async (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => {
    logger.addContext(context);
    const cors = corsHeadersFor(origins, event.headers);
    let sse: Writable | undefined;
    try {
      const ready = await server();
      const userId = callerId(event, config.AUTH_MODE);
      const threadId = event.pathParameters?.thread_id;
      // Ownership before effect, as every thread route (functions/agent-server.ts): first, for anyone but the owner.
      if (event.resource.includes("{thread_id}")) await ready.threads.assertOwned(userId, threadId);
      const body = parseJsonBody(event, RunCreate, { maxBytes: 1024 * 1024 });
      await executeRun(ready.runDeps, { userId, threadId, deadline: runDeadline(context) }, body, {
        started: (run) => {
          sse = awslambda.HttpResponseStream.from(responseStream, {
            statusCode: 200,
            headers: {
              "content-type": "text/event-stream",
              "cache-control": "no-cache",
              "x-accel-buffering": "no",
              "content-location": `/threads/${run.thread_id}/runs/${run.run_id}`,
              ...standInHeaders(config),
              ...cors,
            },
          });
          sendEvent(sse, "metadata", { run_id: run.run_id, attempt: 1 });
        },
        event: (name, data) => sse && sendEvent(sse, name, data),
      });
    } catch (err) {
      if (!sse) return sendError(responseStream, err, cors);
      logger.error("stream failed", { error: err });
      sendEvent(sse, "error", { error: "internal_error", message: "internal error" });
    } finally {
      logger.resetKeys();
    }
    sse?.end();
  };
}

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "POST /threads/{thread_id}/runs/stream": { path: z.object({ thread_id: z.uuid() }), body: RunCreate },
  "POST /runs/stream": { body: RunCreate },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  awslambda.streamifyResponse(createAgentServerStreamHandler(config(), deferredAgentServer(logger, backends)));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
