import * as z from "../../shared/zod";
import { storable } from "../../shared/text";

/** What the chat function queues after each reply, and the extraction function reads. */
export const ExtractionMessage = z.object({
  user_id: storable(z.string().check(z.minLength(1), z.maxLength(128))),
  project_id: z.nullable(storable(z.string().check(z.minLength(1), z.maxLength(128)))),
  session_id: storable(z.string().check(z.minLength(1), z.maxLength(128))),
  /** stable for the turn (the assistant message id): the idempotency key */
  turn_id: storable(z.string().check(z.minLength(1), z.maxLength(256))),
  user_message: storable(z.string().check(z.maxLength(64 * 1024))),
  assistant_reply: storable(z.string().check(z.maxLength(256 * 1024))),
  /** when the turn began: an erased session's tombstone refuses only turns before the erasure (absent: any) */
  turn_at: z.optional(z.iso.datetime({ offset: true })),
});

export type ExtractionMessage = z.infer<typeof ExtractionMessage>;

/**
 * The turn a queue record carries, or an error naming what is wrong with it. Such a record can
 * never succeed: it fails each receive with that reason (logged) until SQS dead-letters it.
 */
export function parseExtractionMessage(body: string): ExtractionMessage {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    throw new InvalidQueueMessage("the body is not JSON");
  }
  const parsed = ExtractionMessage.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidQueueMessage(`${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  return parsed.data;
}

export class InvalidQueueMessage extends Error {
  constructor(readonly reason: string) {
    super(`invalid extraction message: ${reason}`);
    this.name = "InvalidQueueMessage";
  }
}
