import type { StateSnapshot } from "@langchain/langgraph";
import { randomUUID } from "node:crypto";
import { AppError, asAppError, badRequest } from "../../shared/errors";
import type { QueuePublisher } from "../../shared/queue";
import { webhookProblem } from "../../shared/webhooks";
import {
  type AgentRuns,
  isWaiting,
  type MultitaskStrategy,
  type RunRecord,
  type RunStatus,
} from "../../shared/stores/agent-runs";
import type { AgentThreads, ThreadStatus } from "../../shared/stores/agent-threads";
import type { CancelAction } from "../../shared/stores/session-lease";
import type { SettingsPatch } from "../../shared/session-settings";
import type { ChatService, RunOutcome } from "../chat/service";
import { APPROVE_TOOLS } from "../tools/approval";
import { GRAPHS, type GraphId } from "./assistants";
import { threadBusyForRun } from "./errors";
import { type RunCreateBody, runCheckpoint, runInput, streamModes } from "./requests";
import { RunStream } from "./run-stream";
import { endLostRun } from "./lost-runs";
import { notifyRunEnded, withdrawRun } from "./run-webhook";
import { interruptsOf, valuesDict } from "./serialize";

/** The assistant a run is for: its graph, and what its configuration adds to the run's. */
export interface RunAssistant {
  assistant_id: string;
  graph_id: GraphId;
  configurable?: Record<string, unknown>;
}

export interface RunDeps {
  chat: ChatService;
  runs: AgentRuns;
  /** the caller's thread list: a run marks its thread busy, then leaves its status and values */
  threads: AgentThreads;
  /** the thread's latest state, once a run ended */
  readState(threadId: string): Promise<StateSnapshot>;
  /** the assistant an id names, for its caller: a graph id, a graph's assistant, or one of theirs */
  assistant(userId: string, assistantId: string): Promise<RunAssistant>;
  /** asks the run holding the owner's thread's lease to stop, or only `runId` if it holds it (SessionOwners.requestCancel) */
  requestCancel(threadId: string, userId: string, action: CancelAction, runId?: string): Promise<boolean>;
  maxMessageBytes: number;
  /** removes a stateless run's thread once it finished (`on_completion: "delete"`) */
  deleteThread(threadId: string, userId: string): Promise<void>;
  /** a run that failed on the server's side (not the client's), for the logs */
  onServerError?: (error: unknown) => void;
  /** the hosts a run's `webhook` may name (WEBHOOK_HOSTS) */
  webhookHosts: readonly string[];
  /** the webhook sender's queue; absent: a run with a webhook is refused */
  webhooks?: QueuePublisher;
}

/** A run's webhook, refused (400) before anything of the run is done when it may not be called. */
export function checkWebhook(deps: Pick<RunDeps, "webhookHosts" | "webhooks">, body: RunCreateBody): void {
  if (body.webhook === undefined) return;
  const problem = deps.webhooks ? webhookProblem(body.webhook, deps.webhookHosts) : "this deployment sends no webhooks";
  if (problem) throw badRequest("webhook_not_allowed", problem);
}

/**
 * What every run is checked for before anything of it is done, however it comes (streamed, waited
 * on, in the background, a cron's): its assistant, one that runs from this API; its input; its
 * webhook. Also before a run makes the thread it asks for (graph/agent-server/guard.ts).
 */
export async function checkRun(deps: RunDeps, userId: string, body: RunCreateBody) {
  const assistant = await deps.assistant(userId, body.assistant_id);
  if (!GRAPHS[assistant.graph_id].runnable)
    throw new AppError(
      409,
      "assistant_read_only",
      `the ${assistant.graph_id} assistant runs from its own trigger, not this API`,
    );
  const input = runInput(body, deps.maxMessageBytes);
  checkWebhook(deps, body);
  return { assistant, input };
}

/**
 * interrupt and rollback, as LangGraph's server does them: every run the thread has live stops. One
 * still waiting its turn never runs (interrupted; deleted under rollback); the one running is asked
 * to stop through its lease, keeping (interrupt) or taking back out (rollback) what it wrote.
 */
export async function stopLiveRuns(
  deps: RunDeps,
  threadId: string,
  userId: string,
  action: CancelAction,
  /** the run that asks, recorded already (a background run): it is not stopped */
  except?: string,
) {
  // Waiting: pending, or claimed by a worker and waiting for the lease (running, not begun).
  const waiting = (await deps.runs.list(threadId)).filter((r) => isWaiting(r) && r.runId !== except);
  await Promise.all(waiting.map((r) => withdrawRun(deps, r, action)));
  // Unconditionally: the lease's holder may be a run with no record (an /api/chat turn).
  await deps.requestCancel(threadId, userId, action);
}

/**
 * A background run withdrawn while it waited for its thread (cancelled, or stopped by another
 * run's interrupt or rollback): it never runs, and its record already says so.
 */
export class RunWithdrawn extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} was withdrawn before it began`);
    this.name = "RunWithdrawn";
  }
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

/** A failed run's error, as LangGraph's servers name it (`error`), with the project's code beside. */
export interface RunError {
  error: string;
  message: string;
  code: string;
}

export interface RunResult {
  runId: string;
  threadId: string;
  /** the thread's values after the run */
  values: unknown;
  /** set when the run failed after it started */
  error?: RunError;
}

/**
 * One Agent Server API run: a run of the chat graph through ChatService (the session lease, the
 * owner and project check, the deadline, the transcript and memory extraction), from a new
 * message, a command, or the thread's checkpoint (a branch when the run names an earlier one),
 * with the graph's chunks relayed in the stream modes the client asked for. The run is recorded
 * in the thread's partition; the thread is busy while it runs, and left idle, interrupted or in
 * error, with its values, before the next run may start.
 */
export async function executeRun(
  deps: RunDeps,
  caller: RunCaller,
  body: RunCreateBody,
  sink: RunSink,
  /** a background run: recorded (and claimed, status running) before the worker runs it */
  recorded?: RunRecord,
): Promise<RunResult> {
  const { assistant, input } = await checkRun(deps, caller.userId, body);
  const strategy: MultitaskStrategy = body.multitask_strategy ?? "reject";
  // interrupt and rollback ask the running run to stop, through its lease, then wait for the
  // lease as enqueue does; the stopped run keeps (interrupt) or takes back (rollback) its writes.
  if ((strategy === "interrupt" || strategy === "rollback") && caller.threadId !== undefined)
    await stopLiveRuns(deps, caller.threadId, caller.userId, strategy);

  const stream = new RunStream(streamModes(body), (name, data) => sink.event(name, data));
  const runId = recorded?.runId ?? randomUUID();
  const now = recorded?.createdAt ?? new Date().toISOString();
  let threadId = caller.threadId;
  /** the run is on record and its response began: from here on a failure is the run's, not the request's */
  let started = false;
  let values: unknown = null;

  let ended: { status: RunStatus; error?: RunError } | undefined;
  /** Under the run's lease: what the thread and the run record say once it ended. */
  const settle = async ({ outcome, error }: { outcome?: RunOutcome; error?: unknown }) => {
    if (!started) return; // refused before it started: no run to settle
    const snapshot = await deps.readState(threadId!);
    const interrupts = interruptsOf(snapshot);
    const state = valuesDict(snapshot.values) as Record<string, unknown>;
    // What /runs/wait answers: the last values, as LangGraph streams them, with what the run stopped for.
    const pending = Object.values(interrupts).flat();
    values = pending.length > 0 ? { ...state, __interrupt__: pending } : state;
    const app = error === undefined ? undefined : asAppError(error);
    const cancelled = app?.code === "run_cancelled";
    const paused = Object.keys(interrupts).length > 0 || (outcome?.interrupted ?? false);
    const status: ThreadStatus = paused ? "interrupted" : app && !cancelled ? "error" : "idle";
    await deps.threads.settle(caller.userId, threadId!, { status, values: state, interrupts });
    // A run waiting its turn keeps the thread busy. Listed after the write: a run made meanwhile
    // marked the thread busy once it was on record (createBackgroundRun), so whichever of the two
    // writes lands last, the thread ends busy.
    if (status === "idle" && (await deps.runs.list(threadId!)).some((r) => r.runId !== runId && isWaiting(r)))
      await deps.threads.busy(caller.userId, threadId!);
    ended = { status: app ? runStatusOf(app.code) : "success", ...(app ? { error: errorOf(app) } : {}) };
    await deps.runs.finish(threadId!, runId, ended.status, ended.error);
  };
  /** The finished run to its webhook. */
  const notify = async () => {
    if (!ended || !threadId) return;
    const run: RunRecord = {
      runId,
      threadId,
      assistantId: assistant.assistant_id,
      status: ended.status,
      multitaskStrategy: recorded?.multitaskStrategy ?? strategy,
      metadata: body.metadata ?? {},
      createdAt: now,
      updatedAt: new Date().toISOString(),
    };
    await notifyRunEnded(deps, body.webhook, run, { values, startedAt: now, error: ended.error?.message });
  };

  try {
    await deps.chat.run(
      {
        userId: caller.userId,
        sessionId: caller.threadId,
        projectId: body.config?.configurable?.project_id,
        ...(input.message ? { message: input.message.text, messageId: input.message.id } : {}),
        ...(input.answers ? { answers: input.answers } : {}),
        ifBusy: strategy === "reject" ? "reject" : "queue",
        // A background run (the worker's, with its 15 minutes) waits for the thread as long as it may.
        ...(recorded ? { waitUntilDeadline: true } : {}),
        durability: "sync",
        deadline: caller.deadline,
        options: {
          ...(input.command ? { command: input.command } : {}),
          checkpointId: runCheckpoint(body),
          interruptBefore: body.interrupt_before,
          interruptAfter: body.interrupt_after,
          recursionLimit: body.config?.recursion_limit,
          // In every checkpoint's metadata, and in the messages' stream metadata.
          metadata: {
            ...body.metadata,
            run_id: runId,
            assistant_id: assistant.assistant_id,
            graph_id: assistant.graph_id,
          },
          runId,
          // The run's configuration over its assistant's; the session settings are the session's,
          // within what the assistant allows.
          configurable: {
            ...withoutSettings(assistant.configurable),
            ...(body.config?.configurable?.approve_tools !== undefined
              ? { [APPROVE_TOOLS]: body.config.configurable.approve_tools }
              : {}),
          },
          allowedSettings: assistant.configurable?.settings as SettingsPatch | undefined,
        },
        settle,
        // Before the graph runs: the run is on record, and its thread busy, by its first event.
        begin: async (sessionId) => {
          threadId = sessionId;
          const run: RunRecord = {
            runId,
            threadId,
            assistantId: assistant.assistant_id,
            status: "running",
            multitaskStrategy: strategy,
            metadata: body.metadata ?? {},
            createdAt: now,
            updatedAt: now,
            // Under its lease: begun, so only the lease can stop it (AgentRuns.withdraw).
            startedAt: now,
            // Whose it is, as a background run's record says: an erasure finds it by it.
            userId: caller.userId,
          };
          // A background run begins only if nothing withdrew it while it waited for the lease.
          if (recorded && !(await deps.runs.markStarted(threadId, runId))) throw new RunWithdrawn(runId);
          const others = (caller.threadId === undefined ? [] : await deps.runs.list(threadId)).filter(
            (r) => r.runId !== runId,
          );
          // Under the lease, no other run of the thread can be going: one that began and is still
          // marked running lost its worker or function (a crash, a timeout).
          // Ended as any finder ends one, its webhook posted.
          await Promise.all(
            others.filter((r) => r.status === "running" && r.startedAt).map((r) => endLostRun(deps, r)),
          );
          // Under reject, a background run waiting its turn holds the thread as the lease's holder
          // does. Read under the lease: one admitted after this finds the lease held (AgentRuns.admit).
          // One seen waiting is read again once no admission is under way: it may be one that found
          // this run's lease and is being taken back (both were refused then).
          const waits = (runs: RunRecord[]) => runs.some((r) => r.runId !== runId && isWaiting(r));
          if (strategy === "reject" && !recorded && waits(others) && waits(await deps.runs.listAdmitted(threadId)))
            throw threadBusyForRun();
          await Promise.all([
            recorded ? Promise.resolve() : deps.runs.put(run),
            deps.threads.started(caller.userId, threadId, {
              graph_id: assistant.graph_id,
              assistant_id: assistant.assistant_id,
            }),
          ]);
          started = true;
          sink.started({ run_id: runId, thread_id: threadId });
        },
      },
      {
        modes: stream.graphModes,
        onChunk: (mode, chunk) => stream.chunk(mode, chunk),
        ...(stream.wantsEvents ? { onEvent: (event) => stream.event(event) } : {}),
      },
    );
  } catch (err) {
    // Refused before it started: no run, the status says why. A run that waited its turn and ran
    // out of wait is told so: it chose to wait, and "choose a different strategy" would mislead.
    if (!started) throw strategy !== "reject" && isSessionBusy(err) ? threadStillBusy() : err;
    const app = asAppError(err);
    if (app.status >= 500) deps.onServerError?.(err);
    const error = errorOf(app);
    sink.event("error", error);
    await notify();
    await finishStateless(deps, caller, body, threadId!);
    return { runId, threadId: threadId!, values, error };
  }
  await notify();
  await finishStateless(deps, caller, body, threadId!);
  return { runId, threadId: threadId!, values };
}

const isSessionBusy = (err: unknown) => err instanceof AppError && err.code === "session_busy";

/** A run that waits its turn (enqueue, interrupt, rollback) still waiting when its request must answer. */
const threadStillBusy = () =>
  new AppError(
    409,
    "thread_busy",
    "The thread's earlier runs were still running after the wait this request allows. Retry, or create the run in the background (runs.create), which waits longer.",
  );

const runStatusOf = (code: string): RunStatus =>
  code === "turn_timeout" ? "timeout" : code === "run_cancelled" ? "interrupted" : "error";

/** LangGraph's own error names where the failure is one of its (a recursion limit); else the project's code. */
function errorOf(app: AppError): RunError {
  const name = (app.cause as { name?: string } | undefined)?.name;
  const langGraph = name === "GraphRecursionError" ? name : undefined;
  return { error: langGraph ?? app.code, message: app.message, code: app.code };
}

/** A stateless run whose thread goes once it finished (`on_completion: "delete"`, the default): nothing of it may stay. */
export const deletesItsThread = (caller: Pick<RunCaller, "threadId">, body: Pick<RunCreateBody, "on_completion">) =>
  caller.threadId === undefined && (body.on_completion ?? "delete") === "delete";

async function finishStateless(deps: RunDeps, caller: RunCaller, body: RunCreateBody, threadId: string) {
  if (deletesItsThread(caller, body)) await deps.deleteThread(threadId, caller.userId);
}

function withoutSettings(configurable: Record<string, unknown> | undefined) {
  const { settings: _settings, ...rest } = configurable ?? {};
  return rest;
}
