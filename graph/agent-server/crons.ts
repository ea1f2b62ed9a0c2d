import { v5 as uuid5 } from "uuid";
import { randomUUID } from "node:crypto";
import * as z from "../../shared/zod";
import type { CronFiring, CronScheduler } from "../../shared/cron-scheduler";
import { AppError, badRequest } from "../../shared/errors";
import type { Logger } from "../../shared/logger";
import { Metadata } from "../../shared/storable-json";
import type { AgentCrons, CronRecord } from "../../shared/stores/agent-crons";
import { backoff, CONFLICT_RETRY } from "../../shared/stores/batch";
import { laterThan } from "../../shared/stores/updated-at";
import { once } from "../../shared/once";
import { storableText } from "../../shared/text";
import { type BackgroundDeps, createBackgroundRun, runQueued } from "./background";
import { RunCreate } from "./requests";
import { checkRun } from "./runs";

// The cron routes' schemas are built when first parsed (z.lazy), like requests.ts's.
/** POST /threads/{thread_id}/runs/crons: a run's fields, and when to make it. */
export const CronCreate = z.lazy(() =>
  z.extend(RunCreate, {
    schedule: storableText({ min: 1, max: 128 }),
    end_time: z.optional(z.iso.datetime({ offset: true })),
    enabled: z.optional(z.boolean()),
    on_run_completed: z.optional(z.enum(["delete", "keep"])),
  }),
);

export const CronPatch = z.lazy(() =>
  z.object({
    schedule: z.optional(storableText({ min: 1, max: 128 })),
    end_time: z.nullish(z.iso.datetime({ offset: true })),
    enabled: z.optional(z.boolean()),
    metadata: z.optional(Metadata),
  }),
);

export const CronSearch = z.lazy(() =>
  z.object({
    assistant_id: z.nullish(storableText({ max: 128 })),
    thread_id: z.nullish(z.uuid()),
    enabled: z.nullish(z.boolean()),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    offset: z._default(z.number().check(z.int(), z.gte(0)), 0),
    sort_by: z._default(
      z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"]),
      "created_at",
    ),
    sort_order: z._default(z.enum(["asc", "desc"]), "desc"),
  }),
);

export const CronCount = z.lazy(() =>
  z.object({
    assistant_id: z.nullish(storableText({ max: 128 })),
    thread_id: z.nullish(z.uuid()),
  }),
);

/** The run worker's message when a cron fires (EventBridge Scheduler's input, or the local timer's). */
export const CronFiringMessage = z.object({
  cron_id: z.uuid(),
  user_id: storableText({ min: 1, max: 256 }),
  scheduled_time: z.optional(z.iso.datetime()),
});

export interface CronDeps extends BackgroundDeps {
  crons: AgentCrons;
  scheduler?: CronScheduler;
}

/** The namespace of the run ids derived from firings (a random, fixed UUID). */
const FIRINGS = "0f6e3b0c-2d5e-4c1a-9a77-5b8f3f1d2c64";

const cronNotFound = () => new AppError(404, "cron_not_found", "Cron not found");

/** The schedules module, imported by the first cron route: croner is 32 KB a run never needs. */
const schedules = once(() => import("../../shared/schedules"));

/** A cron's next firing: none when it is disabled, or when its next is past its end_time. */
async function nextRunOf(cron: CronRecord, now: Date): Promise<Date | undefined> {
  if (!cron.enabled) return undefined;
  const next = (await schedules()).nextRunAfter(cron.schedule, now);
  return next && cron.endTime && next.getTime() > Date.parse(cron.endTime) ? undefined : next;
}

export async function cronJson(cron: CronRecord, now = new Date()) {
  const next = await nextRunOf(cron, now);
  return {
    cron_id: cron.cronId,
    assistant_id: cron.assistantId,
    thread_id: cron.threadId,
    user_id: cron.userId,
    schedule: cron.schedule,
    payload: cron.payload,
    metadata: cron.metadata,
    end_time: cron.endTime ?? null,
    enabled: cron.enabled,
    created_at: cron.createdAt,
    updated_at: cron.updatedAt,
    next_run_date: next?.toISOString() ?? null,
  };
}

/**
 * A cron's metadata, with room for the `cron_id` each firing adds to its run's: over the bound with
 * it, a firing's run could not be kept (and would fail at every firing), so the cron is refused.
 */
function checkCronMetadata(metadata: Record<string, unknown> | undefined) {
  if (metadata === undefined) return;
  const fired = Metadata.safeParse({ ...metadata, cron_id: FIRINGS });
  if (!fired.success)
    throw badRequest(
      "metadata_too_large",
      `metadata: must leave room for the cron_id each firing adds (${fired.error.issues[0]!.message})`,
    );
}

async function checkSchedule(schedule: string) {
  const problem = (await schedules()).scheduleProblem(schedule);
  if (problem) throw badRequest("invalid_schedule", problem);
}

/** A cron with a patch applied, its updated_at moved forward (its version for the conditional write). */
function patched(cron: CronRecord, patch: z.infer<typeof CronPatch>): CronRecord {
  const { endTime: _end, ...rest } = cron;
  const endTime =
    patch.end_time === null ? undefined : patch.end_time ? new Date(patch.end_time).toISOString() : cron.endTime;
  return {
    ...rest,
    schedule: patch.schedule?.trim() ?? cron.schedule,
    enabled: patch.enabled ?? cron.enabled,
    metadata: patch.metadata ?? cron.metadata,
    // The firings' runs carry the cron's metadata: their request's is the cron's.
    payload: patch.metadata ? { ...cron.payload, metadata: patch.metadata } : cron.payload,
    updatedAt: laterThan(cron.updatedAt),
    ...(endTime ? { endTime } : {}),
  };
}

/**
 * The Agent Server API's crons on a thread: a schedule, and the background run each firing makes
 * (graph/agent-server/background.ts), as its creator. The record is the caller's (their partition);
 * the schedule is the scheduler's. A cron is checked as its run would be (input, assistant,
 * webhook) when it is made, not first at its firing.
 */
export class CronService {
  constructor(private readonly deps: CronDeps) {}

  private scheduler(): CronScheduler {
    if (!this.deps.scheduler) throw new AppError(503, "crons_unavailable", "crons need the deployment's scheduler");
    return this.deps.scheduler;
  }

  async create(userId: string, threadId: string, body: z.infer<typeof CronCreate>) {
    await checkSchedule(body.schedule);
    checkCronMetadata(body.metadata);
    if (body.after_seconds !== undefined)
      throw badRequest("invalid_after_seconds", "after_seconds: a cron's runs start at its firings; set its schedule");
    const scheduler = this.scheduler();
    const { assistant } = await checkRun(this.deps.runDeps, userId, body);
    const { schedule, end_time, enabled, on_run_completed: _kept, ...payload } = body;
    const now = new Date().toISOString();
    const cron: CronRecord = {
      cronId: randomUUID(),
      userId,
      threadId,
      assistantId: assistant.assistant_id,
      schedule: schedule.trim(),
      payload,
      metadata: body.metadata ?? {},
      enabled: enabled ?? true,
      createdAt: now,
      updatedAt: now,
      ...(end_time ? { endTime: new Date(end_time).toISOString() } : {}),
    };
    await this.deps.crons.put(cron, { ifNew: true });
    // Recorded first: a firing always finds its cron (one whose schedule failed to be made is removed).
    try {
      await scheduler.put(cron);
    } catch (err) {
      await this.deps.crons.remove(userId, cron.cronId);
      throw err;
    }
    return cronJson(cron);
  }

  /**
   * The cron as patched. The record is written first, on the condition that it is as read (read
   * again when another patch got in first), then its schedule; a delete that got in between the
   * two took the schedule out before this put it back, so the record is read once more: gone, the
   * schedule goes again (404); changed by a later patch, the schedule is put from that one.
   */
  async update(userId: string, cronId: string, patch: z.infer<typeof CronPatch>) {
    if (patch.schedule !== undefined) await checkSchedule(patch.schedule);
    checkCronMetadata(patch.metadata);
    const scheduler = this.scheduler();
    for (let attempt = 0; attempt < CONFLICT_RETRY.maxAttempts; attempt++) {
      if (attempt > 0) await backoff(attempt, CONFLICT_RETRY);
      const cron = await this.deps.crons.get(userId, cronId);
      if (!cron) throw cronNotFound();
      const updated = patched(cron, patch);
      if (!(await this.deps.crons.put(updated, { ifUpdatedAt: cron.updatedAt }))) continue;
      await scheduler.put(updated);
      const now = await this.deps.crons.get(userId, cronId);
      if (!now) {
        await scheduler.remove(cronId);
        throw cronNotFound();
      }
      if (now.updatedAt !== updated.updatedAt) await scheduler.put(now);
      return cronJson(updated);
    }
    throw new AppError(409, "cron_busy", "the cron kept changing meanwhile; retry");
  }

  /** The record first: a patch that wrote the schedule after this removed it finds the record gone. */
  async delete(userId: string, cronId: string) {
    const cron = await this.deps.crons.get(userId, cronId);
    if (!cron) throw cronNotFound();
    await this.deps.crons.remove(userId, cronId);
    await this.scheduler().remove(cronId);
  }

  /**
   * The caller's crons for an assistant (named by its id or its graph's, as a run names it) and a
   * thread. An id that names no assistant matches none.
   */
  private async matching(userId: string, query: z.infer<typeof CronCount>) {
    const assistantId = query.assistant_id
      ? await this.deps.runDeps.assistant(userId, query.assistant_id).then(
          (a) => a.assistant_id,
          (err: unknown) => {
            if (err instanceof AppError && err.status === 404) return query.assistant_id;
            throw err;
          },
        )
      : undefined;
    return (await this.deps.crons.list(userId)).filter(
      (c) => (!assistantId || c.assistantId === assistantId) && (!query.thread_id || c.threadId === query.thread_id),
    );
  }

  async search(userId: string, query: z.infer<typeof CronSearch>) {
    const now = new Date();
    const found = await Promise.all(
      (await this.matching(userId, query))
        .filter((c) => query.enabled == null || c.enabled === query.enabled)
        .map((c) => cronJson(c, now)),
    );
    const key = query.sort_by;
    found.sort(
      (a, b) => String(a[key] ?? "").localeCompare(String(b[key] ?? "")) * (query.sort_order === "asc" ? 1 : -1),
    );
    return found.slice(query.offset, query.offset + query.limit);
  }

  async count(userId: string, query: z.infer<typeof CronCount>) {
    return (await this.matching(userId, query)).length;
  }
}

/**
 * A cron's firing, in the run worker: the background run its cron asks for, made and run here
 * (no second message). A firing of a cron that is gone (deleted, or its user erased) removes its
 * schedule; one whose thread is gone removes the cron; a disabled or ended one makes nothing.
 */
export async function fireCron(
  deps: CronDeps,
  firing: CronFiring,
  {
    deadline,
    deliveryId,
    redelivered = false,
    logger,
  }: { deadline?: number; deliveryId: string; redelivered?: boolean; logger: Logger },
) {
  const cron = await deps.crons.get(firing.user_id, firing.cron_id);
  if (!cron) {
    await deps.scheduler?.remove(firing.cron_id);
    return;
  }
  if (!cron.enabled || (cron.endTime && Date.parse(cron.endTime) < Date.now())) return;
  try {
    await deps.threads.assertOwned(cron.userId, cron.threadId);
  } catch {
    logger.warn("cron's thread is gone: cron removed", { cronId: cron.cronId });
    await deps.scheduler?.remove(cron.cronId);
    await deps.crons.remove(cron.userId, cron.cronId);
    return;
  }
  const body = RunCreate.parse(cron.payload);
  try {
    const run = await createBackgroundRun(
      deps,
      cron.userId,
      cron.threadId,
      {
        ...body,
        // A cron's run waits for the thread rather than being refused when another runs.
        multitask_strategy: body.multitask_strategy ?? "enqueue",
        metadata: { ...body.metadata, cron_id: cron.cronId },
      },
      // One run per firing: a copy of the firing (the same scheduled time, or for a schedule made
      // before firings carried it, the same message) finds its run made.
      { publish: false, runId: uuid5(`${cron.cronId}:${firing.scheduled_time ?? deliveryId}`, FIRINGS) },
    );
    // A firing delivered again after its worker stopped finds its run running: lost, not run again.
    await runQueued(deps, { thread_id: cron.threadId, run_id: run.runId }, { redelivered, deadline });
  } catch (err) {
    // Its assistant deleted, its thread busy under reject: this firing makes nothing; the next may.
    if (!(err instanceof AppError)) throw err;
    logger.warn("cron fired no run", { cronId: cron.cronId, code: err.code, reason: err.message });
  }
}
