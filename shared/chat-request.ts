import type { APIGatewayProxyEvent } from "aws-lambda";
import * as z from "./zod";
import type { Config } from "./config";
import { AppError } from "./errors";
import { parseJsonBody } from "./http";
import { callerId } from "./identity";
import { SettingsPatch } from "./session-settings";
import { identifier, isStorableText, storable } from "./text";

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
    message: storable(
      z.string({ error: "is required and must be a string" }).check(z.maxLength(maxMessageBytes, tooLarge)),
    ).check(
      z.superRefine((m, ctx) => {
        if (m.trim().length === 0) ctx.addIssue({ code: "custom", message: "must not be empty" });
        else if (isStorableText(m) && Buffer.byteLength(m) > maxMessageBytes) {
          ctx.addIssue({
            code: "too_big",
            origin: "string",
            maximum: maxMessageBytes,
            message: tooLarge,
          });
        }
      }),
    ),
    session_id: z.optional(z.uuid({ error: "must be a session id returned by this API (a UUID)" })),
    user_id: z.optional(id),
    project_id: z.optional(id),
    if_busy: z.optional(z.enum(["reject", "queue"], { error: 'must be "reject" or "queue"' })),
    /** a new session's settings (shared/session-settings.ts) */
    settings: z.optional(SettingsPatch),
    /** ready image files of this session to send with the message (file ids) */
    attachments: z.optional(z.array(z.uuid({ error: "must be file ids returned by this API" })).check(z.maxLength(20))),
    /** small images inline, base64 (the body cap bounds them: INLINE_IMAGES_MAX_BYTES) */
    images: z.optional(
      z
        .array(
          z.strictObject({
            media_type: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"], {
              error: "must be image/png, image/jpeg, image/gif or image/webp",
            }),
            data: z.base64({ error: "must be base64" }).check(z.minLength(1)),
          }),
        )
        .check(z.maxLength(20)),
    ),
  });
}

/** The chat turn a request asks for, with the caller taken from the request context. */
export function parseChatRequest(event: APIGatewayProxyEvent, config: Config) {
  const body = parseJsonBody(event, chatRequest(config.MAX_MESSAGE_BYTES), {
    maxBytes: chatBodyCap(config),
  });
  const images = body.images?.map((i) => ({
    media_type: i.media_type,
    bytes: new Uint8Array(Buffer.from(i.data, "base64")),
  }));
  const inlineBytes = (images ?? []).reduce((n, i) => n + i.bytes.byteLength, 0);
  if (inlineBytes > config.INLINE_IMAGES_MAX_BYTES)
    throw new AppError(
      413,
      "images_too_large",
      `inline images total ${inlineBytes} bytes, over INLINE_IMAGES_MAX_BYTES (${config.INLINE_IMAGES_MAX_BYTES}); upload larger ones as files and send their ids in attachments`,
    );
  return {
    userId: callerId(event, config.AUTH_MODE, body.user_id),
    projectId: body.project_id,
    sessionId: body.session_id,
    message: body.message,
    ifBusy: body.if_busy,
    settings: body.settings,
    attachments: body.attachments,
    images,
  };
}

/**
 * The largest chat body worth parsing: JSON may spell each byte of the message as a six-byte
 * \u00XX escape, plus room for the other fields.
 */
export const chatBodyLimit = (maxMessageBytes: number) => 6 * maxMessageBytes + 4096;

/** The whole body's cap: the message's, plus inline images as base64 (4 characters per 3 bytes). */
export const chatBodyCap = (config: Pick<Config, "MAX_MESSAGE_BYTES" | "INLINE_IMAGES_MAX_BYTES">) =>
  chatBodyLimit(config.MAX_MESSAGE_BYTES) + Math.ceil((config.INLINE_IMAGES_MAX_BYTES * 4) / 3);
