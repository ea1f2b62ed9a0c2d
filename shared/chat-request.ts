import type { APIGatewayProxyEvent } from "aws-lambda";
import * as z from "zod";
import type { Config } from "./config";
import { parseJsonBody } from "./http";
import { callerId } from "./identity";
import { SettingsPatch } from "./session-settings";
import { identifier, storableTextProblem } from "./text";

const id = identifier();

/**
 * The body of POST /api/chat and /api/chat/stream. Unknown fields are ignored. API Gateway
 * validates bodies against this same schema, as JSON Schema (infra/aws/api-models.ts).
 */
export function chatRequest(maxMessageBytes: number) {
  const tooLarge = `must be at most ${maxMessageBytes} bytes`;
  return z.object({
    // A character is at least a byte, so the length cap (which JSON Schema can express) never
    // refuses a message the byte cap accepts.
    message: z
      .string({ error: "is required and must be a string" })
      .max(maxMessageBytes, tooLarge)
      .superRefine((m, ctx) => {
        const problem = storableTextProblem(m);
        if (m.trim().length === 0) ctx.addIssue({ code: "custom", message: "must not be empty" });
        else if (problem) ctx.addIssue({ code: "custom", message: problem });
        else if (Buffer.byteLength(m) > maxMessageBytes) {
          ctx.addIssue({
            code: "too_big",
            origin: "string",
            maximum: maxMessageBytes,
            message: tooLarge,
          });
        }
      }),
    session_id: z.uuid({ error: "must be a session id returned by this API (a UUID)" }).optional(),
    user_id: id.optional(),
    project_id: id.optional(),
    if_busy: z.enum(["reject", "queue"], { error: 'must be "reject" or "queue"' }).optional(),
    /** a new session's settings (shared/session-settings.ts) */
    settings: SettingsPatch.optional(),
    /** ready image files of this session to send with the message (file ids) */
    attachments: z
      .array(z.uuid({ error: "must be file ids returned by this API" }))
      .max(20)
      .optional(),
  });
}

/** The chat turn a request asks for, with the caller taken from the request context. */
export function parseChatRequest(event: APIGatewayProxyEvent, config: Config) {
  const body = parseJsonBody(event, chatRequest(config.MAX_MESSAGE_BYTES), {
    maxBytes: chatBodyLimit(config.MAX_MESSAGE_BYTES),
  });
  return {
    userId: callerId(event, config.AUTH_MODE, body.user_id),
    projectId: body.project_id,
    sessionId: body.session_id,
    message: body.message,
    ifBusy: body.if_busy,
    settings: body.settings,
    attachments: body.attachments,
  };
}

/**
 * The largest chat body worth parsing: JSON may spell each byte of the message as a six-byte
 * \u00XX escape, plus room for the other fields.
 */
export const chatBodyLimit = (maxMessageBytes: number) => 6 * maxMessageBytes + 4096;
