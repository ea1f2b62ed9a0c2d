import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import type { Writable } from "node:stream";
import { deferredChatRuntime } from "../graph/chat/deferred-runtime";
import { awsWiring, type Wiring } from "../shared/wiring";
import type { ChatRuntime } from "../graph/chat/runtime";
import type { ChatReply } from "../graph/chat/service";
import { chatRequest, parseChatRequest } from "../shared/chat-request";
import { type Config, DEFAULT_MAX_MESSAGE_BYTES } from "../shared/config";
import { corsHeadersFor, parseOrigins } from "../shared/cors";
import { AppError, asAppError } from "../shared/errors";
import { runDeadline } from "../shared/deadline";
import { errorAnswer, standInHeaders } from "../shared/http";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { createMetrics, recordTurnMetrics } from "../shared/metrics";

const logger = createLogger("chat-stream");
const metrics = createMetrics("chat-stream");

/** Writes after the client left are dropped: the turn still finishes and is saved. */
function send(stream: Writable, event: Record<string, unknown>) {
  if (!stream.writableEnded && !stream.destroyed) stream.write(`data: ${JSON.stringify(event)}\n\n`);
}

function sendError(stream: Writable, err: unknown, cors: Record<string, string>) {
  const app = err instanceof AppError ? err : undefined;
  if (!app || app.status >= 500) logger.error("stream failed", { error: err });
  const { status, body, headers } = errorAnswer(err);
  const out = awslambda.HttpResponseStream.from(stream, {
    statusCode: status,
    headers: { "content-type": "application/json", ...headers, ...cors },
  });
  out.end(JSON.stringify(body));
}

/**
 * POST /api/chat/stream: the same turn as /api/chat, as server-sent events, each a JSON
 * `data:` line: session, token…, tool_start/tool_end, trace (with ?trace=1), session_name,
 * then done (or error). Events are written as they happen. Errors found before the turn
 * starts (bad input, unknown session, busy) are plain JSON errors with their status.
 *
 * Hand-wrapped with awslambda.streamifyResponse rather than middy's streaming mode: middy
 * ends the invocation when the client disconnects, which could freeze a turn half-saved;
 * here the invocation always lasts until the turn is saved and the lease released.
 */
export function createChatStreamHandler(config: Config, runtime: () => Promise<Pick<ChatRuntime, "chat">>) {
  const origins = parseOrigins(config.CORS_ORIGINS);
  return async (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => {
    logger.addContext(context);
    const cors = corsHeadersFor(origins, event.headers);
    logger.appendKeys({ requestId: event.requestContext?.requestId });
    let started = false;
    let sse: Writable | undefined;
    try {
      const turn = { ...parseChatRequest(event, config), deadline: runDeadline(context) };
      const { chat } = await runtime();
      const withTrace = event.queryStringParameters?.trace === "1";
      const emit = (e: Record<string, unknown>) => sse && send(sse, e);
      const result: ChatReply = await chat.reply(turn, {
        onSession: (sessionId) => {
          started = true;
          sse = awslambda.HttpResponseStream.from(responseStream, {
            statusCode: 200,
            headers: {
              "content-type": "text/event-stream",
              "cache-control": "no-cache",
              "x-accel-buffering": "no",
              ...standInHeaders(config),
              ...cors,
            },
          });
          emit({ type: "session", session_id: sessionId });
        },
        onToken: (text) => emit({ type: "token", text }),
        onToolStart: (name, args) => emit({ type: "tool_start", name, args }),
        onToolEnd: (name, summary) => emit({ type: "tool_end", name, summary }),
        onTrace: withTrace ? (step) => emit({ type: "trace", step }) : undefined,
        onSessionName: (name) => emit({ type: "session_name", name }),
      });
      emit({
        type: "done",
        reply: result.reply,
        message_id: result.messageId,
        ...(result.interrupted ? { interrupted: true } : {}),
      });
      recordTurnMetrics(metrics, result.trace);
      metrics.publishStoredMetrics();
      logger.info("stream finished", { sessionId: result.sessionId, messageId: result.messageId });
    } catch (err) {
      if (!started) return sendError(responseStream, err, cors);
      const app = asAppError(err);
      if (app.status >= 500) logger.error("stream failed", { error: err });
      if (sse) send(sse, { type: "error", code: app.code, message: app.message });
    } finally {
      logger.resetKeys();
    }
    sse?.end();
  };
}

/** The route's request schemas, for the storable-text walk (shared/request-schemas.ts); the shape, at the default size. */
export const requestSchemas: RouteSchemas = {
  "POST /api/chat/stream": { body: chatRequest(DEFAULT_MAX_MESSAGE_BYTES) },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  awslambda.streamifyResponse(createChatStreamHandler(config(), deferredChatRuntime(logger, backends)));

// Settings are validated at init: a missing or bad one fails the cold start, naming it.
export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
