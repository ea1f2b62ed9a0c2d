import type { ChatRuntime } from "../graph/chat/runtime";
import { apiHandler } from "../shared/api-handler";
import { parseChatRequest } from "../shared/chat-request";
import { json } from "../shared/http";
import { createLogger } from "../shared/logger";
import { createMetrics, recordTurnMetrics } from "../shared/metrics";
import { awsChatRuntime } from "../graph/chat/aws-runtime";

const logger = createLogger("chat");
const metrics = createMetrics("chat");

/** POST /api/chat: parse, run one turn, respond. */
export function createChatHandler(runtime: () => Promise<ChatRuntime>) {
  return apiHandler(logger, async (event) => {
    const { config, chat } = await runtime();
    const turn = parseChatRequest(event, config);
    logger.appendKeys({ sessionId: turn.sessionId, userId: turn.userId });
    const result = await chat.reply(turn);
    recordTurnMetrics(metrics, result.trace);
    metrics.publishStoredMetrics();
    logger.info("reply sent", { sessionId: result.sessionId, messageId: result.messageId });
    return json(200, { reply: result.reply, session_id: result.sessionId, message_id: result.messageId });
  });
}

export const handler = createChatHandler(awsChatRuntime(logger));
export { loadDeferred } from "../shared/deferred";
