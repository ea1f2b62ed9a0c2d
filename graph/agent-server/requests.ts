import * as z from "zod";
import { chatRequest } from "../../shared/chat-request";
import { badRequest } from "../../shared/errors";
import { Metadata, storableJson } from "../../shared/storable-json";
import { identifier, storable, storableText } from "../../shared/text";

export const ThreadCreate = z.object({
  thread_id: z.uuid({ error: "must be a UUID" }).optional(),
  metadata: Metadata.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
});

export const ThreadPatch = z.object({ metadata: Metadata.optional() });

export const ThreadSearch = z.object({
  metadata: Metadata.optional(),
  ids: z
    .array(storableText({ max: 128 }))
    .max(1000)
    .optional(),
  status: z.enum(["idle", "busy", "interrupted", "error"]).optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
});

export const HistoryQuery = z.object({
  limit: z.number().int().min(1).max(1000).default(10),
  before: z
    .object({ configurable: z.object({ checkpoint_id: storableText({ max: 128 }) }).loose() })
    .loose()
    .optional(),
});

export const AssistantSearch = z.object({
  graph_id: storableText({ max: 128 }).optional(),
  name: storableText({ max: 128 }).optional(),
  metadata: Metadata.optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
});

/** The stream modes a run can ask for, and the LangGraph mode each one reads. */
export const STREAM_MODES = {
  values: "values",
  updates: "updates",
  "messages-tuple": "messages",
  custom: "custom",
} as const;
export type StreamMode = keyof typeof STREAM_MODES;

const StreamModeSchema = z.enum(Object.keys(STREAM_MODES) as [StreamMode, ...StreamMode[]], {
  error: `must be one of ${Object.keys(STREAM_MODES).join(", ")}`,
});

// The text is bounded by the body's size here and by MAX_MESSAGE_BYTES once joined (newHumanMessage).
const TextBlock = z.object({ type: storableText({ max: 64 }), text: storable(z.string()).optional() }).loose();
const InputMessage = z
  .object({
    type: storableText({ max: 64 }).optional(),
    role: storableText({ max: 64 }).optional(),
    content: z.union([storable(z.string()), z.array(TextBlock)]),
    id: storableText({ min: 1, max: 128 }).optional(),
  })
  .loose();

export const RunCreate = z.object({
  assistant_id: storableText({ min: 1, max: 128 }),
  input: z
    .object({ messages: z.array(InputMessage).min(1) })
    .loose()
    .nullish(),
  // Never run (newHumanMessage refuses it), but still only storable JSON.
  command: storableJson(z.unknown(), { maxBytes: 16 * 1024 }).optional(),
  stream_mode: z.union([StreamModeSchema, z.array(StreamModeSchema)]).optional(),
  multitask_strategy: z.enum(["reject", "enqueue", "interrupt", "rollback"]).optional(),
  metadata: Metadata.optional(),
  config: z
    .object({ configurable: z.object({ project_id: identifier().optional() }).loose().optional() })
    .loose()
    .optional(),
  on_completion: z.enum(["delete", "keep"]).optional(),
});
export type RunCreateBody = z.infer<typeof RunCreate>;

/**
 * The one new human message a run's input carries, as useStream sends it. History comes from
 * the thread's checkpoint, so anything else (earlier messages, an AI message) is refused rather
 * than appended twice.
 */
export function newHumanMessage(body: RunCreateBody, maxMessageBytes: number): { text: string; id?: string } {
  if (body.command !== undefined && body.command !== null)
    throw badRequest(
      "unsupported_command",
      "command (resuming an interrupt) is not supported: the chat graph never interrupts",
    );
  const messages = body.input?.messages;
  if (!messages) throw badRequest("invalid_input", "input.messages: a run needs one new human message");
  if (messages.length !== 1)
    throw badRequest(
      "invalid_input",
      "input.messages: send only the new human message; the thread's history is in its checkpoint",
    );
  const message = messages[0]!;
  const role = message.type ?? message.role ?? "human";
  if (role !== "human" && role !== "user")
    throw badRequest("invalid_input", `input.messages.0: must be a human message, not "${role.slice(0, 32)}"`);
  const text =
    typeof message.content === "string"
      ? message.content
      : message.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
  const checked = chatRequest(maxMessageBytes).shape.message.safeParse(text);
  if (!checked.success)
    throw badRequest("invalid_input", `input.messages.0.content: ${checked.error.issues[0]!.message}`);
  return { text: checked.data, ...(message.id ? { id: message.id } : {}) };
}

export function streamModes(body: RunCreateBody): StreamMode[] {
  const modes = body.stream_mode ?? ["values"];
  return [...new Set(Array.isArray(modes) ? modes : [modes])];
}
