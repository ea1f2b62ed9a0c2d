import { randomUUID } from "node:crypto";
import * as z from "../../shared/zod";
import { AppError, asAppError } from "../../shared/errors";
import type { QueuePublisher } from "../../shared/queue";
import { type AgentRuns, isWaiting, LIVE, type RunRecord, WORKER_LOST } from "../../shared/stores/agent-runs";
import type { RunEventLog } from "../../shared/stores/run-events";
import { threadBusyForRun } from "./errors";
import { RunCreate, type RunCreateBody } from "./requests";
import { endLostRun } from "./lost-runs";
import { notifyRunEnded } from "./run-webhook";
import { checkRun, executeRun, type RunDeps, RunWithdrawn, stopLiveRuns } from "./runs";
import type { ThreadService } from "./threads";

/** What a background run needs beyond a foreground one's: its queue and its event log. */
export interface BackgroundDeps {
  runDeps: RunDeps;
  runs: AgentRuns;
  events: RunEventLog;
  threads: ThreadService;
  /** the run worker's queue (functions/run-worker.ts) */
  runsQueue?: QueuePublisher;
}

/** The run worker's message: which run to start. The request itself is on the run's record. */
export const RunMessage = z.object({ thread_id: z.uuid(), run_id: z.uuid() });

/**
 * runs.create: the run is checked as a streamed one would be (its input, its assistant, a busy
 * thread under `reject`), recorded `pending` with its request, and handed to the run worker
 * through its queue; the answer comes at once. The worker may take it any time after, and more
 * than once: it claims the record first (RunDeps' `transition`), so a run is run once.
 */
export async function createBackgroundRun(
  deps: BackgroundDeps,
  userId: string,
  threadId: string,
  body: RunCreateBody,
  /**
   * publish false: the caller runs it itself (a cron's firing, already in the worker); runId: the
   * run's id chosen by the caller, made once however often it asks (a firing delivered twice)
   */
  { publish = true, runId }: { publish?: boolean; runId?: string } = {},
): Promise<RunRecord> {
  if (!deps.runsQueue && publish)
    throw new AppError(503, "runs_unavailable", "background runs need the run worker's queue");
  const { assistant } = await checkRun(deps.runDeps, userId, body);
  const strategy = body.multitask_strategy ?? "reject";
  const now = new Date().toISOString();
  const run: RunRecord = {
    runId: runId ?? randomUUID(),
    threadId,
    assistantId: assistant.assistant_id,
    status: "pending",
    multitaskStrategy: strategy,
    metadata: body.metadata ?? {},
    createdAt: now,
    updatedAt: now,
    kwargs: body as Record<string, unknown>,
    userId,
  };
  // reject admits a run only onto a thread with nothing else live, one at a time (AgentRuns.admit).
  const admission =
    strategy === "reject"
      ? await deps.runs.admit(run, () => deps.threads.owners.leaseHeld(threadId))
      : (await deps.runs.put(run, { ifNew: runId !== undefined }))
        ? "admitted"
        : "exists";
  if (admission === "busy") throw threadBusyForRun();
  // Made already (a firing delivered twice, the copies at once or not): the run as it is. Only the
  // copy that made it goes on, so no copy's strategy stops the run another copy made.
  if (admission === "exists") return (await deps.runs.get(threadId, run.runId))!;
  // interrupt and rollback stop what is live now, but this run; it then waits its turn like enqueue.
  if (strategy === "interrupt" || strategy === "rollback")
    await stopLiveRuns(deps.runDeps, threadId, userId, strategy, run.runId);
  // Busy from now until no run waits (LangGraph's server shows it so): a client waiting for the
  // thread to be done waits for this run too. Before the worker can take the run, so a run that
  // ends at once cannot settle its thread before this lands.
  try {
    await deps.runDeps.threads.busy(userId, threadId, {
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
    });
    if (publish)
      await deps.runsQueue!.publish(
        { thread_id: threadId, run_id: run.runId },
        body.after_seconds ? { delaySeconds: body.after_seconds } : {},
      );
  } catch (err) {
    // Not handed to the worker: it would wait for good and keep its thread busy. Taken back (it is
    // still pending, so no worker has it), and the request fails as a whole.
    await deps.runs.remove(threadId, run.runId);
    await deps.threads.settleWaiting(userId, threadId);
    throw err;
  }
  return run;
}

/**
 * The run worker's part: the thread's pending runs, oldest first, up to and including the one the
 * message names, so runs enqueued on a thread finish in the order they were made whichever
 * message a worker gets first. Each is claimed (pending -> running) before it runs: a message
 * delivered twice, or a run already taken by another worker, runs nothing. A run found `running`
 * on a redelivery lost its worker (a crash or timeout): it is marked failed, not run again.
 */
export async function runQueued(
  deps: BackgroundDeps,
  message: z.infer<typeof RunMessage>,
  { redelivered, deadline }: { redelivered: boolean; deadline?: number },
  run: (deps: BackgroundDeps, claimed: RunRecord, deadline?: number) => Promise<void> = runClaimed,
): Promise<void> {
  const { thread_id: threadId, run_id: runId } = message;
  for (;;) {
    const runs = await deps.runs.list(threadId);
    const target = runs.find((r) => r.runId === runId);
    if (!target) return; // deleted before it ran
    if (target.status === "running" && redelivered) {
      // Begun: a copy delivered while its worker still runs it (holding the thread's lease itself)
      // is not a loss; a lease another run or turn holds says nothing of this one.
      if (target.startedAt && (await deps.threads.owners.leaseHeld(threadId, runId))) return;
      // Not begun: its worker may still be waiting for the thread, as long as a worker waits
      // (isWaiting). Judged again on the next delivery, by when it has waited too long if not.
      if (!target.startedAt && isWaiting(target)) throw new RunStillWaiting(runId);
      if (await markLost(deps, target))
        // It held the thread busy while it waited; nothing may be left to settle it otherwise.
        if (target.userId) await deps.threads.settleWaiting(target.userId, threadId);
      return;
    }
    if (target.status !== "pending") return;
    // The oldest pending run that is due (one made with after_seconds waits for its time).
    const next = runs.find((r) => r.status === "pending" && (isDue(r) || r.runId === runId))!;
    if (!(await deps.runs.transition(threadId, next.runId, "pending", "running"))) continue;
    await run(deps, { ...next, status: "running" }, deadline);
    if (next.runId === runId) return;
  }
}

/**
 * A redelivered run taken by a worker that may still be waiting for its thread: the message fails,
 * so SQS brings it back after its visibility timeout, when the run has waited too long if its
 * worker is gone.
 */
export class RunStillWaiting extends Error {
  constructor(runId: string) {
    super(`run ${runId} may still be waiting for its thread; it is judged again on the next delivery`);
    this.name = "RunStillWaiting";
  }
}

/** A pending run's time has come: its creation plus its after_seconds. */
const isDue = (run: RunRecord) =>
  Date.parse(run.createdAt) + Number(run.kwargs?.after_seconds ?? 0) * 1000 <= Date.now();

/** A claimed run, run as its creator, its events into its log; its record ends in its outcome. */
async function runClaimed(deps: BackgroundDeps, run: RunRecord, deadline?: number) {
  const log = deps.events.writer(run.runId);
  /** the run was deleted (with its thread) before it could start: its log, written after, goes too */
  let gone = false;
  try {
    const body = RunCreate.parse(run.kwargs);
    // Its strategy did its part at create (reject's admission, interrupt's and rollback's stop):
    // by now the run waits for the thread like an enqueued one, and stops nothing made after it.
    await executeRun(
      deps.runDeps,
      { userId: run.userId!, threadId: run.threadId, ...(deadline ? { deadline } : {}) },
      { ...body, multitask_strategy: "enqueue" },
      {
        started: (started) => log.push("metadata", { run_id: started.run_id, attempt: 1 }),
        event: (name, data) => log.push(name, data),
      },
      run,
    );
  } catch (err) {
    // Its record says why (interrupted, or deleted). Its thread, busy while it waited, is settled
    // here: the cancel that withdrew it found the thread's lease held (this worker's) and left it.
    if (err instanceof RunWithdrawn) return await deps.threads.settleWaiting(run.userId!, run.threadId);
    // Refused before it started (its assistant deleted, its thread gone), or failed on our side
    // before it could (its kept request unreadable): the run failed, rather than stay running and
    // hold its thread.
    const app = asAppError(err);
    if (app.status >= 500) deps.runDeps.onServerError?.(err);
    const error = { code: app.code, message: app.message };
    if (!(await deps.runs.finish(run.threadId, run.runId, "error", error, { from: "running" }))) {
      // Withdrawn while it waited, as its start was checked (interrupted, or deleted by a rollback),
      // or deleted with its thread: what took it says how it ended, and posted its webhook.
      gone = (await deps.runs.get(run.threadId, run.runId)) === undefined;
      return await deps.threads.settleWaiting(run.userId!, run.threadId);
    }
    log.push("error", { error: app.code, message: app.message, code: app.code });
    await deps.threads.settleWaiting(run.userId!, run.threadId, { whenDone: "error" });
    const ended = { ...run, status: "error" as const, error, updatedAt: new Date().toISOString() };
    await notifyRunEnded(deps.runDeps, run.kwargs?.webhook, ended, { error: app.message });
  } finally {
    await log.close();
    if (gone) await deps.events.remove(run.runId);
  }
}

/**
 * A run as it stands. One that began holds its thread's lease until its record says how it ended
 * (ChatService settles it under the lease); one still marked running with the lease free lost its
 * worker or function (a crash, a timeout), and is marked so (its thread in error, as after any
 * failed run), so a join ends, a cancel finds nothing to stop and the thread takes runs again.
 */
export async function runAsItStands(
  deps: Pick<BackgroundDeps, "runs" | "threads" | "runDeps">,
  run: RunRecord,
): Promise<RunRecord> {
  if (run.status !== "running") return run;
  // Not begun: lost once it waited longer than any worker waits for its thread.
  if (!run.startedAt && isWaiting(run)) return run;
  // Begun, it holds the lease until its record says how it ended: held by anyone else, it is lost.
  if (run.startedAt && (await deps.threads.owners.leaseHeld(run.threadId, run.runId))) return run;
  // Read again: it may have ended, and let the lease go, between the two reads.
  const now = await deps.runs.get(run.threadId, run.runId);
  if (now?.status !== "running") return now ?? run;
  if (!(await markLost(deps, now))) return (await deps.runs.get(run.threadId, run.runId)) ?? now;
  const owner = run.userId ?? (await deps.threads.owners.owner(run.threadId));
  // In error, as after any failed run, unless another run waits its turn on it: busy then.
  const waiting = (await deps.runs.list(run.threadId)).some((r) => r.runId !== run.runId && isWaiting(r));
  if (owner) await deps.threads.records.update(owner, run.threadId, { status: waiting ? "busy" : "error" });
  return { ...now, status: "error", error: WORKER_LOST };
}

/** endLostRun on this run store, its webhook through the run's deps. */
const markLost = (deps: Pick<BackgroundDeps, "runs" | "runDeps">, run: RunRecord) =>
  endLostRun({ ...deps.runDeps, runs: deps.runs }, run);

/**
 * runs.join: once the run is over, the thread's values (with `__error__` when it failed), as
 * /runs/wait answers. Polled on the run's record (one read per `pollMs`) until then, or until the
 * deadline, when the run still going is a 408 the client may repeat.
 */
export async function joinRunResult(
  deps: BackgroundDeps,
  userId: string,
  threadId: string,
  runId: string,
  { deadline, pollMs = 250 }: { deadline: number; pollMs?: number },
) {
  const run = await runEnded(deps, threadId, runId, { deadline, pollMs });
  if (!run) throw new AppError(408, "run_still_running", "the run is still going: join it again");
  const thread = await deps.threads.get(userId, threadId);
  if (!run.error) return thread.values ?? {};
  // As LangGraph names it (`error`), with the project's code beside.
  const error = { error: (run.error as { error?: string }).error ?? run.error.code, message: run.error.message };
  return { ...(thread.values as object), __error__: { ...error, code: run.error.code } };
}

/**
 * A run's record once it is over, polled (one read per `pollMs`; about once a second, whether a
 * run that began still holds its thread: runAsItStands) until then or the deadline (undefined).
 */
export async function runEnded(
  deps: Pick<BackgroundDeps, "runs" | "threads" | "runDeps">,
  threadId: string,
  runId: string,
  { deadline, pollMs = 250 }: { deadline: number; pollMs?: number },
): Promise<RunRecord | undefined> {
  for (let polls = 0; ; polls++) {
    const read = await deps.runs.get(threadId, runId);
    if (!read) throw new AppError(404, "run_not_found", "Run not found");
    const run = polls % Math.max(1, Math.round(1000 / pollMs)) === 0 ? await runAsItStands(deps, read) : read;
    if (!LIVE.has(run.status)) return run;
    if (Date.now() + pollMs > deadline) return undefined;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
