import type { AIMessageChunk } from "@langchain/core/messages";
import { randomUUID } from "node:crypto";
import { AppError } from "../../shared/errors";
import type { AgentRuns, MultitaskStrategy, RunRecord } from "../../shared/stores/agent-runs";
import type { CancelAction } from "../../shared/stores/session-lease";
import type { ChatService } from "../chat/service";
import { GRAPHS, graphOf } from "./assistants";
import { newHumanMessage, type RunCreateBody, STREAM_MODES, type StreamMode, streamModes } from "./requests";
import { messageDict, valuesDict } from "./serialize";

export interface RunDeps {
  chat: ChatService;
  runs: AgentRuns;
  /** asks the run holding the owner's thread's lease to stop (SessionOwners.requestCancel) */
  requestCancel(threadId: string, userId: string, action: CancelAction): Promise<boolean>;
  maxMessageBytes: number;
  /** removes a stateless run's thread once it finished (`on_completion: "delete"`) */
  deleteThread(threadId: string, userId: string): Promise<void>;
}

export interface RunCaller {
  userId: string;
  /** absent: a stateless run, on a thread of its own */
  threadId?: string;
  deadline?: number;
}

/** Where a run's events go: the SSE response, or nowhere for /runs/wait. */
export interface RunSink {
  /** the run holds its thread: the response can start */
  started(run: { run_id: string; thread_id: string }): void;
  event(name: string, data: unknown): void;
}

export interface RunResult {
  runId: string;
  threadId: string;
  /** the thread's values after the run */
  values: unknown;
  /** set when the run failed after it started */
  error?: { code: string; message: string };
}

/** The SSE event name of a LangGraph stream chunk, for the modes the client asked for. */
const EVENT_OF: Record<string, StreamMode> = Object.fromEntries(
  Object.entries(STREAM_MODES).map(([mode, graphMode]) => [graphMode, mode as StreamMode]),
);
const eventName = (mode: StreamMode) => (mode === "messages-tuple" ? "messages" : mode);

function chunkData(graphMode: string, chunk: unknown): unknown {
  if (graphMode === "messages") {
    const [message, metadata] = chunk as [AIMessageChunk, Record<string, unknown>];
    return [messageDict(message), metadata];
  }
  return valuesDict(chunk);
}

/**
 * One Agent Server API run: a chat turn through ChatService (the session lease, the owner and
 * project check, the deadline, the transcript and memory extraction), with the graph's chunks
 * relayed in the modes the client asked for. A run is recorded in the thread's partition with
 * its status, timestamps and error.
 */
export async function executeRun(
  deps: RunDeps,
  caller: RunCaller,
  body: RunCreateBody,
  sink: RunSink,
): Promise<RunResult> {
  const graphId = graphOf(body.assistant_id);
  if (!GRAPHS[graphId].runnable)
    throw new AppError(409, "assistant_read_only", `the ${graphId} assistant runs from its own trigger, not this API`);
  const message = newHumanMessage(body, deps.maxMessageBytes);
  const strategy: MultitaskStrategy = body.multitask_strategy ?? "reject";
  // interrupt and rollback ask the running run to stop, through its lease, then wait for the
  // lease as enqueue does; the stopped run keeps (interrupt) or takes back (rollback) its writes.
  if ((strategy === "interrupt" || strategy === "rollback") && caller.threadId !== undefined)
    await deps.requestCancel(caller.threadId, caller.userId, strategy);
  const modes = streamModes(body);
  const graphModes = new Set(modes.map((m) => STREAM_MODES[m]));
  const runId = randomUUID();
  const now = new Date().toISOString();
  let threadId = caller.threadId;
  let recorded: Promise<void> | undefined;
  let values: unknown = null;

  try {
    await deps.chat.reply(
      {
        userId: caller.userId,
        sessionId: caller.threadId,
        projectId: body.config?.configurable?.project_id,
        message: message.text,
        messageId: message.id,
        ifBusy: strategy === "reject" ? "reject" : "queue",
        durability: "sync",
        deadline: caller.deadline,
      },
      {
        // values always: /runs/wait answers with the last of them.
        modes: [...new Set(["values" as const, ...graphModes])],
        onSession: (sessionId) => {
          threadId = sessionId;
          const run: RunRecord = {
            runId,
            threadId,
            assistantId: body.assistant_id,
            status: "running",
            multitaskStrategy: strategy,
            metadata: body.metadata ?? {},
            createdAt: now,
            updatedAt: now,
          };
          recorded = deps.runs.put(run);
          // Awaited once the run ended; handled now, so a failed write is this request's error, never
          // an unhandled rejection that would end the process (or the invocation, its lease held).
          recorded.catch(() => {});
          sink.started({ run_id: runId, thread_id: threadId });
        },
        onChunk: (graphMode, chunk) => {
          if (graphMode === "values") values = valuesDict(chunk);
          const mode = EVENT_OF[graphMode];
          if (mode && graphModes.has(graphMode as never)) sink.event(eventName(mode), chunkData(graphMode, chunk));
        },
      },
    );
  } catch (err) {
    if (recorded === undefined) throw err; // refused before it started: no run, the status says why
    const app = err instanceof AppError ? err : new AppError(500, "internal_error", "internal error", { cause: err });
    const error = { code: app.code, message: app.message };
    await recorded.catch(() => undefined);
    await deps.runs.finish(threadId!, runId, statusOf(app.code), error);
    sink.event("error", { error: app.code, message: app.message });
    await finishStateless(deps, caller, body, threadId!);
    return { runId, threadId: threadId!, values, error };
  }
  await recorded;
  await deps.runs.finish(threadId!, runId, "success");
  await finishStateless(deps, caller, body, threadId!);
  return { runId, threadId: threadId!, values };
}

const statusOf = (code: string) =>
  code === "turn_timeout" ? "timeout" : code === "run_cancelled" ? "interrupted" : "error";

async function finishStateless(deps: RunDeps, caller: RunCaller, body: RunCreateBody, threadId: string) {
  if (caller.threadId === undefined && (body.on_completion ?? "delete") === "delete")
    await deps.deleteThread(threadId, caller.userId);
}

/** A run record as the API shows it (`Run` in the SDK's types). */
export function runJson(run: RunRecord) {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    assistant_id: run.assistantId,
    status: run.status,
    metadata: run.metadata,
    multitask_strategy: run.multitaskStrategy,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    ...(run.error ? { error: run.error } : {}),
  };
}
