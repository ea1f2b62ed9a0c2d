import type { APIGatewayProxyEvent } from "aws-lambda";
import * as z from "zod";
import type { Config } from "./config";
import { parseJsonBody } from "./http";
import { callerId } from "./identity";

const id = z.string().trim().min(1).max(128);

/** The body of POST /api/chat and /api/chat/stream. Unknown fields are ignored. */
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
    if_busy: z.enum(["reject", "queue"], { error: 'must be "reject" or "queue"' }).optional(),
  });
}

/** The chat turn a request asks for, with the caller taken from the request context. */
export function parseChatRequest(event: APIGatewayProxyEvent, config: Config) {
  const body = parseJsonBody(event, chatRequest(config.MAX_MESSAGE_BYTES));
  return {
    userId: callerId(event, config.AUTH_MODE, body.user_id),
    projectId: body.project_id,
    sessionId: body.session_id,
    message: body.message,
    ifBusy: body.if_busy,
  };
}
