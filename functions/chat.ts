import type { ChatRuntime } from "../graph/chat/runtime";
import { apiHandler } from "../shared/api-handler";
import { chatRequest, parseChatRequest } from "../shared/chat-request";
import { type Config, DEFAULT_MAX_MESSAGE_BYTES } from "../shared/config";
import { runDeadline } from "../shared/deadline";
import { json, standInHeaders } from "../shared/http";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { createMetrics, recordTurnMetrics } from "../shared/metrics";
import { deferredChatRuntime } from "../graph/chat/deferred-runtime";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("chat");
const metrics = createMetrics("chat");

/**
 * POST /api/chat: parse, run one turn, respond. The request is checked before the runtime is
 * asked for, so bad input is answered without loading the agent (shared/deferred.ts).
 */
export function createChatHandler(config: Config, runtime: () => Promise<Pick<ChatRuntime, "chat">>) {
  return apiHandler(
    logger,
    async (event, context) => {
      const turn = { ...parseChatRequest(event, config), deadline: runDeadline(context) };
      const { chat } = await runtime();
      logger.appendKeys({ sessionId: turn.sessionId, userId: turn.userId });
      const result = await chat.reply(turn);
      recordTurnMetrics(metrics, result.trace);
      metrics.publishStoredMetrics();
      logger.info("reply sent", { sessionId: result.sessionId, messageId: result.messageId });
      return json(
        200,
        {
          reply: result.reply,
          session_id: result.sessionId,
          message_id: result.messageId,
          // A tool call waits for approval (the session's approve_tools): the Agent Server API resumes it.
          ...(result.interrupted ? { interrupted: true } : {}),
        },
        standInHeaders(config),
      );
    },
    { corsOrigins: () => config.CORS_ORIGINS },
  );
}

/** The route's request schemas, for the storable-text walk (shared/request-schemas.ts); the shape, at the default size. */
export const requestSchemas: RouteSchemas = { "POST /api/chat": { body: chatRequest(DEFAULT_MAX_MESSAGE_BYTES) } };

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createChatHandler(config(), deferredChatRuntime(logger, backends));

// Settings are validated at init: a missing or bad one fails the cold start, naming it.
export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
