import * as z from "../../shared/zod";
import { chatRequest } from "../../shared/chat-request";
import { badRequest } from "../../shared/errors";
import { dynamoMapJson, Metadata, storableJson } from "../../shared/storable-json";
import { identifier, storable, storableText } from "../../shared/text";
import { SettingsPatch } from "../../shared/session-settings";
import { ApprovalResume, ApproveTools } from "../tools/approval";

// Most schemas here are built when a request first parses with them (z.lazy): a cold start of the
// Agent Server function builds only what its request needs, not all of these (331 zod schemas and
// checks, about 5 ms: `npm run bench -- cold-start`). RunCreate, which every run parses, is built at load.

/**
 * A checkpoint's id: LangGraph's uuid6, whose clock sequence is the step, so the input checkpoint's
 * (step -1) is not an RFC 4122 variant ("…-ffff-…"): any 8-4-4-4-12 hex id.
 */
export const CheckpointId = z.guid({ error: "must be a checkpoint id" });

/**
 * A message as a client writes it into the state (threads.updateState, supersteps): LangGraph's
 * message dict. Its type is one LangGraph knows, a tool message answers a call, a removal names
 * what it removes; the rest of its fields (additional_kwargs, tool_calls...) are kept as sent, so
 * the whole of it is storable JSON.
 */
const MessageDict = z.lazy(() =>
  storableJson(
    z
      .looseObject({
        type: z.optional(z.enum(["human", "user", "ai", "assistant", "tool", "system", "remove"])),
        role: z.optional(z.enum(["human", "user", "ai", "assistant", "tool", "system"])),
        content: z.optional(z.union([storable(z.string()), z.array(z.record(z.string(), z.unknown()))])),
        id: z.optional(storableText({ min: 1, max: 128 })),
        tool_call_id: z.optional(storableText({ min: 1, max: 128 })),
        tool_calls: z.optional(
          z
            .array(z.looseObject({ name: storableText({ min: 1, max: 128 }), args: z.record(z.string(), z.unknown()) }))
            .check(z.maxLength(64)),
        ),
      })
      .check(
        z.superRefine((m, ctx) => {
          const type = m.type ?? m.role;
          if (type === undefined) ctx.addIssue({ code: "custom", message: "a message needs its type (or role)" });
          if (type === "tool" && m.tool_call_id === undefined)
            ctx.addIssue({ code: "custom", path: ["tool_call_id"], message: "a tool message answers a call: name it" });
          if (type === "remove" && m.id === undefined)
            ctx.addIssue({ code: "custom", path: ["id"], message: "a removal names the message it removes" });
          if (type !== "remove" && m.content === undefined)
            ctx.addIssue({ code: "custom", path: ["content"], message: "a message needs its content" });
        }),
      ),
    { maxBytes: 256 * 1024 },
  ),
);

/** Each of the chat graph's state keys, as a write to it: the same whether sent as a dict or as [key, value] pairs. */
const StateKeys = {
  messages: z.union([MessageDict, z.array(MessageDict).check(z.maxLength(500))]),
  summary: storableText({ max: 20_000 }),
  tokenRatio: z.number().check(z.gte(0.5), z.lte(4)),
};

/**
 * Values a client writes into the chat graph's state: its messages (one, or a list), and, as a
 * state read back from the history holds them, its running summary and token calibration.
 */
export const StateValues = z.lazy(() =>
  z.strictObject(
    {
      messages: z.optional(StateKeys.messages),
      summary: z.optional(StateKeys.summary),
      tokenRatio: z.optional(StateKeys.tokenRatio),
    },
    { error: "the chat graph's state is its messages, summary and tokenRatio" },
  ),
);

/** A write as [key, value], as LangGraph's Command takes one: a state key and a value that key takes. */
const StateWrite = z.lazy(() =>
  z.union([
    z.tuple([z.literal("messages"), StateKeys.messages]),
    z.tuple([z.literal("summary"), StateKeys.summary]),
    z.tuple([z.literal("tokenRatio"), StateKeys.tokenRatio]),
  ]),
);

const AsNode = storableText({ min: 1, max: 128 });

export const ThreadCreate = z.lazy(() =>
  z.object({
    thread_id: z.optional(z.uuid({ error: "must be a UUID" })),
    metadata: z.optional(Metadata),
    if_exists: z.optional(z.enum(["raise", "do_nothing"])),
    /** states written into the new thread, one superstep after another (threads.create's supersteps) */
    supersteps: z.optional(
      z
        .array(
          z.object({
            updates: z
              .array(z.object({ values: z.nullish(StateValues), as_node: AsNode }))
              .check(z.minLength(1), z.maxLength(16)),
          }),
        )
        .check(z.maxLength(64)),
    ),
  }),
);

/** threads.updateState: values written as if a node had returned them, at the latest checkpoint or a named one. */
export const ThreadStateUpdate = z.lazy(() =>
  z.object({
    values: z.nullish(StateValues),
    as_node: z.optional(AsNode),
    checkpoint_id: z.nullish(CheckpointId),
    checkpoint: z.nullish(
      z.looseObject({
        checkpoint_id: z.optional(CheckpointId),
        checkpoint_ns: z.optional(z.literal("", { error: "must be empty: the chat graph has no subgraphs" })),
      }),
    ),
  }),
);

/** POST /threads/{id}/state/checkpoint: the state at a checkpoint (RemoteGraph.getState). */
export const StateAtCheckpoint = z.lazy(() =>
  z.object({
    checkpoint: z.looseObject({
      checkpoint_id: z.optional(CheckpointId),
      checkpoint_ns: z.optional(z.literal("", { error: "must be empty: the chat graph has no subgraphs" })),
    }),
    subgraphs: z.nullish(z.boolean()),
  }),
);

export const ThreadCount = z.lazy(() =>
  z.object({
    metadata: z.nullish(Metadata),
    status: z.nullish(z.enum(["idle", "busy", "interrupted", "error"])),
    values: z.nullish(Metadata),
  }),
);

export const ThreadPatch = z.lazy(() => z.object({ metadata: z.optional(Metadata) }));

export const ThreadSearch = z.lazy(() =>
  z.object({
    metadata: z.nullish(Metadata),
    values: z.nullish(Metadata),
    ids: z.optional(z.array(storableText({ max: 128 })).check(z.maxLength(1000))),
    status: z.optional(z.enum(["idle", "busy", "interrupted", "error"])),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    offset: z._default(z.number().check(z.int(), z.gte(0)), 0),
    sort_by: z._default(z.enum(["thread_id", "status", "created_at", "updated_at"]), "created_at"),
    sort_order: z._default(z.enum(["asc", "desc"]), "desc"),
  }),
);

export const HistoryQuery = z.lazy(() =>
  z.object({
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    /** only checkpoints whose metadata holds these (a run's metadata is in its checkpoints') */
    metadata: z.nullish(Metadata),
    before: z.optional(z.looseObject({ configurable: z.looseObject({ checkpoint_id: storableText({ max: 128 }) }) })),
  }),
);

export const AssistantSearch = z.lazy(() =>
  z.object({
    graph_id: z.nullish(storableText({ max: 128 })),
    name: z.nullish(storableText({ max: 128 })),
    metadata: z.nullish(Metadata),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    offset: z._default(z.number().check(z.int(), z.gte(0)), 0),
    sort_by: z.nullish(z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"])),
    sort_order: z.nullish(z.enum(["asc", "desc"])),
  }),
);

export const AssistantCount = z.lazy(() =>
  z.object({
    graph_id: z.nullish(storableText({ max: 128 })),
    name: z.nullish(storableText({ max: 128 })),
    metadata: z.nullish(Metadata),
  }),
);

/**
 * An assistant's configuration: LangGraph's run config, whose `configurable` the chat graph reads
 * on every run: its system prompt, its model (one the deployment runs), the session settings it
 * allows (a tool group it turns off is off in its runs; private makes them private) and the tools
 * that wait for approval. Anything else in it is kept and passed to the run as given.
 */
export const AssistantConfig = z.lazy(() =>
  dynamoMapJson(
    z.looseObject({
      configurable: z.optional(
        z.looseObject({
          system_prompt: z.optional(storableText({ min: 1, max: 8000 })),
          model: z.optional(storableText({ min: 1, max: 256 })),
          settings: z.optional(SettingsPatch),
          approve_tools: z.optional(ApproveTools),
        }),
      ),
      recursion_limit: z.optional(z.number().check(z.int(), z.gte(1), z.lte(100))),
    }),
    { maxBytes: 64 * 1024 },
  ),
);
const AssistantContext = z.lazy(() => dynamoMapJson(z.record(z.string(), z.unknown()), { maxBytes: 64 * 1024 }));

export const AssistantCreate = z.lazy(() =>
  z.object({
    graph_id: storableText({ min: 1, max: 128 }),
    assistant_id: z.nullish(z.uuid({ error: "must be a UUID" })),
    config: z.nullish(AssistantConfig),
    context: z.nullish(AssistantContext),
    metadata: z.nullish(Metadata),
    if_exists: z.nullish(z.enum(["raise", "do_nothing"])),
    name: z.nullish(storableText({ min: 1, max: 256 })),
    description: z.nullish(storableText({ max: 2000 })),
  }),
);

export const AssistantPatch = z.lazy(() =>
  z.object({
    graph_id: z.nullish(storableText({ min: 1, max: 128 })),
    config: z.nullish(AssistantConfig),
    context: z.nullish(AssistantContext),
    metadata: z.nullish(Metadata),
    name: z.nullish(storableText({ min: 1, max: 256 })),
    description: z.nullish(storableText({ max: 2000 })),
  }),
);

export const AssistantVersions = z.lazy(() =>
  z.object({
    metadata: z.nullish(Metadata),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    offset: z._default(z.number().check(z.int(), z.gte(0)), 0),
  }),
);

export const AssistantLatest = z.lazy(() => z.object({ version: z.number().check(z.int(), z.gte(1)) }));

/**
 * The stream modes a run can ask for, and the LangGraph modes each one reads. "messages" (whole and
 * partial messages) is built from LangGraph's message chunks and values; "events" is every callback
 * event of the run (streamEvents), so it reads none.
 */
export const STREAM_MODES = {
  values: ["values"],
  updates: ["updates"],
  "messages-tuple": ["messages"],
  messages: ["messages", "values"],
  custom: ["custom"],
  events: [],
  debug: ["debug"],
  tasks: ["tasks"],
  checkpoints: ["checkpoints"],
} as const;
export type StreamMode = keyof typeof STREAM_MODES;

const StreamModeSchema = z.enum(Object.keys(STREAM_MODES) as [StreamMode, ...StreamMode[]], {
  error: `must be one of ${Object.keys(STREAM_MODES).join(", ")}`,
});

// The text is bounded by the body's size here and by MAX_MESSAGE_BYTES once joined (runInput).
const TextBlock = z.lazy(() =>
  z.looseObject({ type: storableText({ max: 64 }), text: z.optional(storable(z.string())) }),
);
const InputMessage = z.lazy(() =>
  z.looseObject({
    type: z.optional(storableText({ max: 64 })),
    role: z.optional(storableText({ max: 64 })),
    content: z.union([storable(z.string()), z.array(TextBlock)]),
    id: z.optional(storableText({ min: 1, max: 128 })),
    tool_call_id: z.optional(storableText({ min: 1, max: 128 })),
    name: z.optional(storableText({ min: 1, max: 128 })),
  }),
);

const NodeName = storableText({ min: 1, max: 128 });
/** Nodes to stop before or after: "*" for every one. */
const Interrupts = z.lazy(() => z.union([z.literal("*"), z.array(NodeName).check(z.maxLength(32))]));

/** A checkpoint of the thread to run from (LangGraph's `checkpoint`; `checkpoint_id` alone says the same). */
const CheckpointRef = z.lazy(() =>
  z.looseObject({
    checkpoint_id: CheckpointId,
    checkpoint_ns: z.optional(z.literal("", { error: "must be empty: the chat graph has no subgraphs" })),
    thread_id: z.optional(z.uuid()),
  }),
);

/** LangGraph's Command, as JSON: storable, bounded. */
export const CommandBody = z.lazy(() =>
  storableJson(
    z
      .strictObject({
        // The chat graph stops only for approvals (graph/tools/approval.ts): a resume answers one.
        resume: z.optional(ApprovalResume),
        // What LangGraph writes as if a node returned it: the chat graph's state keys only.
        update: z.optional(
          z.union([StateValues, z.array(StateWrite).check(z.maxLength(16))], {
            error:
              "a dict of the state's keys (messages, summary, tokenRatio), or a list of [key, value] pairs, each value one its key takes",
          }),
        ),
        goto: z.optional(z.union([NodeName, z.array(NodeName).check(z.maxLength(8))])),
      })
      .check(
        // One that does none of them fails inside LangGraph, as if the state store had.
        z.refine(
          (c) =>
            c.resume !== undefined ||
            c.goto !== undefined ||
            (c.update !== undefined && Object.keys(c.update).length > 0),
          "a command resumes, updates the state or goes to a node: give one of resume, update or goto",
        ),
      ),
    { maxBytes: 16 * 1024 },
  ),
);

/** The largest body an Agent Server route reads (a run's message is bounded far below it, by MAX_MESSAGE_BYTES). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * A run's request is kept whole on a background run's record and a cron's (one DynamoDB item each,
 * 400 KB at most, the cron's beside its metadata): its loose parts are storable JSON, bounded so
 * that the largest request still fits.
 */
const RUN_INPUT_BYTES = 128 * 1024;
const RUN_CONFIG_BYTES = 64 * 1024;

export const RunCreate = z.object({
  assistant_id: storableText({ min: 1, max: 128 }),
  input: z.nullish(
    storableJson(z.looseObject({ messages: z.optional(z.array(InputMessage)) }), {
      maxBytes: RUN_INPUT_BYTES,
    }),
  ),
  command: z.nullish(CommandBody),
  stream_mode: z.optional(z.union([StreamModeSchema, z.array(StreamModeSchema)])),
  multitask_strategy: z.optional(z.enum(["reject", "enqueue", "interrupt", "rollback"])),
  metadata: z.optional(Metadata),
  config: z.optional(
    storableJson(
      z.looseObject({
        configurable: z.optional(
          z.looseObject({
            project_id: z.optional(identifier()),
            // Tools whose calls wait for approval in this run (over its assistant's): names, or "*".
            approve_tools: z.optional(ApproveTools),
          }),
        ),
        // Bounded: every step may be a model call.
        recursion_limit: z.optional(z.number().check(z.int(), z.gte(1), z.lte(100))),
      }),
      { maxBytes: RUN_CONFIG_BYTES },
    ),
  ),
  checkpoint: z.nullish(CheckpointRef),
  checkpoint_id: z.nullish(CheckpointId),
  interrupt_before: z.optional(Interrupts),
  interrupt_after: z.optional(Interrupts),
  on_completion: z.optional(z.enum(["delete", "keep"])),
  if_not_exists: z.optional(z.enum(["create", "reject"])),
  /** the run's events are kept (shared/stores/run-events.ts), so a client that drops can rejoin */
  stream_resumable: z.optional(z.boolean()),
  /** a background run waits this long before it starts (at most SQS's 15-minute delay) */
  after_seconds: z.optional(z.number().check(z.gte(0), z.lte(900))),
  /** where the finished run is posted (a host the deployment allows: shared/webhooks.ts) */
  webhook: z.optional(storableText({ min: 1, max: 2048 })),
  /** what a dropped client means for a streamed run: it goes on either way (a resumable one can be rejoined) */
  on_disconnect: z.optional(z.enum(["cancel", "continue"])),
});
export type RunCreateBody = z.infer<typeof RunCreate>;

/** What a run starts from: a new human message, a command, or neither (continue from the checkpoint). */
export interface RunInput {
  message?: { text: string; id?: string };
  /** tool messages before it, answering calls the thread left unanswered (Agent Chat UI sends them) */
  answers?: ToolAnswer[];
  command?: z.infer<typeof CommandBody>;
}

export interface ToolAnswer {
  tool_call_id: string;
  content: string;
  name?: string;
  id?: string;
}

const textOf = (content: string | { type: string; text?: string }[]) =>
  typeof content === "string" ? content : content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");

/**
 * What a run's body asks the graph to start from. A new message is one human message, as useStream
 * sends it: history comes from the thread's checkpoint, so anything else (earlier messages, an AI
 * message) is refused rather than appended twice. No input (null, `{}` or no messages) continues
 * from the checkpoint: after an interrupt, or from an earlier checkpoint to regenerate. A command
 * comes with no input (Agent Chat UI sends `{}` beside it).
 */
export function runInput(body: RunCreateBody, maxMessageBytes: number): RunInput {
  const input = body.input ?? {};
  const extra = Object.keys(input).find((k) => k !== "messages" && (input as Record<string, unknown>)[k] !== undefined);
  if (extra !== undefined)
    throw badRequest("invalid_input", `input.${extra.slice(0, 64)}: the chat graph's input is its messages only`);
  const messages = input.messages ?? [];
  if (body.command) {
    if (messages.length > 0)
      throw badRequest("invalid_input", "input.messages: send a command or new messages, not both");
    return { command: body.command };
  }
  if (messages.length === 0) return {};
  // Tool messages first may answer calls the thread left unanswered (a stop for approval the user
  // moved past): ChatService checks they do. Then the one new human message.
  const answers = messages.slice(0, -1).map((m, i): ToolAnswer => {
    const type = m.type ?? m.role;
    const callId = (m as { tool_call_id?: unknown }).tool_call_id;
    if (type !== "tool" || typeof callId !== "string" || callId.length === 0 || callId.length > 128)
      throw badRequest(
        "invalid_input",
        `input.messages.${i}: send only the new human message (after tool messages answering unanswered calls); the thread's history is in its checkpoint`,
      );
    const name = (m as { name?: unknown }).name;
    return {
      tool_call_id: callId,
      content: textOf(m.content).slice(0, 4000),
      ...(typeof name === "string" && name.length <= 128 ? { name } : {}),
      ...(m.id ? { id: m.id } : {}),
    };
  });
  const last = messages.length - 1;
  const message = messages[last]!;
  const role = message.type ?? message.role ?? "human";
  if (role !== "human" && role !== "user")
    throw badRequest("invalid_input", `input.messages.${last}: must be a human message, not "${role.slice(0, 32)}"`);
  const checked = chatRequest(maxMessageBytes).shape.message.safeParse(textOf(message.content));
  if (!checked.success)
    throw badRequest("invalid_input", `input.messages.${last}.content: ${checked.error.issues[0]!.message}`);
  return {
    message: { text: checked.data, ...(message.id ? { id: message.id } : {}) },
    ...(answers.length > 0 ? { answers } : {}),
  };
}

export function streamModes(body: RunCreateBody): StreamMode[] {
  const modes = body.stream_mode ?? ["values"];
  return [...new Set(Array.isArray(modes) ? modes : [modes])];
}

/** The checkpoint a run starts from, when it names one. */
export const runCheckpoint = (body: RunCreateBody) => body.checkpoint?.checkpoint_id ?? body.checkpoint_id ?? undefined;

/** GET /threads/{thread_id}/runs/{run_id}/stream: rejoin a run's stream (joinStream). */
export const JoinStreamQuery = z.lazy(() =>
  z.object({
    cancel_on_disconnect: z.optional(z.enum(["0", "1", "true", "false"])),
    stream_mode: z.optional(z.union([StreamModeSchema, z.array(StreamModeSchema)])),
  }),
);

/**
 * The Last-Event-ID a reconnecting client sends: the id of the last event it saw (ids are counted
 * from 0), or -1 for all of them. Anything else is refused rather than taken as "from the start".
 */
export function lastEventId(header: string | undefined): number {
  if (header === undefined || header === "") return -1;
  if (!/^(-1|0|[1-9]\d{0,8})$/.test(header.trim()))
    throw badRequest("invalid_last_event_id", "Last-Event-ID must be an event id this API sent (a number)");
  return Number(header.trim());
}
