import * as z from "../zod";
import { storable } from "../text";

/**
 * Intercom's ids are short; every field that reaches storage or a queue is capped and must be
 * storable text (shared/text.ts): no lone surrogate, no NUL. The webhook checks what Intercom
 * sends with it, and the support worker checks its queue's messages with it again, since a
 * message can reach the queue without passing the webhook.
 */
export const intercomField = (max: number) => storable(z.string().check(z.maxLength(max)));

/** What the webhook queues for the support worker: one customer part of a conversation. */
export const SupportMessage = z.object({
  notification_id: intercomField(256).check(z.minLength(1)),
  conversation_id: intercomField(128).check(z.minLength(1)),
  part_id: intercomField(128).check(z.minLength(1)),
  topic: intercomField(128).check(z.minLength(1)),
});
export type SupportMessage = z.infer<typeof SupportMessage>;
