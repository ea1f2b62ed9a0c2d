import { z } from "zod";
import { apiHandler } from "../shared/api-handler";
import { callerId } from "../shared/identity";
import { json, parseJsonBody } from "../shared/http";
import { createLogger } from "../shared/logger";
import { buildChatRuntime, type ChatRuntime } from "../graph/chat/runtime";
import { awsBackends, once } from "../shared/backends";

const logger = createLogger("chat");

const id = z.string().trim().min(1).max(128);

/** POST /api/chat body. Unknown fields are ignored. */
export function chatRequest(maxMessageBytes: number) {
  return z.object({
    message: z.string({ error: "is required and must be a string" }).superRefine((m, ctx) => {
      if (m.trim().length === 0) ctx.addIssue({ code: "custom", message: "must not be empty" });
      else if (Buffer.byteLength(m) > maxMessageBytes) {
        ctx.addIssue({
          code: "too_big",
          origin: "string",
          maximum: maxMessageBytes,
          message: `must be at most ${maxMessageBytes} bytes`,
        });
      }
    }),
    session_id: z.uuid({ error: "must be a session id returned by this API (a UUID)" }).optional(),
    user_id: id.optional(),
    project_id: id.optional(),
  });
}

/** POST /api/chat: parse, run one turn, respond. */
export function createChatHandler(runtime: () => Promise<ChatRuntime>) {
  return apiHandler(logger, async (event) => {
    const { config, chat } = await runtime();
    const body = parseJsonBody(event, chatRequest(config.MAX_MESSAGE_BYTES));
    const userId = callerId(event, config.AUTH_MODE, body.user_id);
    logger.appendKeys({ sessionId: body.session_id, userId });
    const result = await chat.reply({
      userId,
      projectId: body.project_id,
      sessionId: body.session_id,
      message: body.message,
    });
    logger.info("reply sent", { sessionId: result.sessionId, messageId: result.messageId });
    return json(200, { reply: result.reply, session_id: result.sessionId, message_id: result.messageId });
  });
}

export const handler = createChatHandler(once(async () => buildChatRuntime(await awsBackends(), logger)));
