import * as z from "zod";

/** What the chat function queues after each reply, and the extraction function reads. */
export const ExtractionMessage = z.object({
  user_id: z.string().min(1).max(128),
  project_id: z.string().min(1).max(128).nullable(),
  session_id: z.string().min(1).max(128),
  /** stable for the turn (the assistant message id): the idempotency key */
  turn_id: z.string().min(1).max(256),
  user_message: z.string().max(64 * 1024),
  assistant_reply: z.string().max(256 * 1024),
});

export type ExtractionMessage = z.infer<typeof ExtractionMessage>;
