import pLimit from "p-limit";
import { randomUUID } from "node:crypto";
import * as z from "../../shared/zod";
import type { Backends } from "../../shared/backends";
import { repairUnfinished } from "../chat/unfinished-turn";
import { AppError, notFound } from "../../shared/errors";
import { AgentRuns, isWaiting, type RunRecord } from "../../shared/stores/agent-runs";
import { threadJson } from "../../shared/stores/agent-json";
import { AgentThreads, type ThreadRecord, type ThreadStatus } from "../../shared/stores/agent-threads";
import { LEASE_MS } from "../../shared/stores/session-lease";
import { OWNER_SORT_KEY, SessionOwners } from "../../shared/stores/session-owners";
import { ownedSession } from "../../shared/ownership";
import { identifier } from "../../shared/text";
import { DynamoDBSaver } from "../checkpoint";
import type { ChatGraph } from "../chat/graph";
import { deleteSession, removeRunLogs } from "../chat/session-deletion";
import { malformedId, threadBusy, threadNotFound } from "./errors";
import type { HistoryQuery, StateValues, ThreadCount, ThreadCreate, ThreadSearch } from "./requests";
import { interruptsOf, threadState, valuesDict } from "./serialize";
import { copyThreadHistory } from "./thread-copy";
import { jsonContains } from "./json-contains";

const ThreadId = z.uuid();

/** A thread marked busy this long ago with nothing holding or waiting for it was left so (a lease's length, twice). */
const STALE_BUSY_MS = 2 * LEASE_MS;

interface ThreadFilter {
  metadata?: Record<string, unknown> | null;
  status?: ThreadStatus | null;
  values?: Record<string, unknown> | null;
  ids?: string[];
}

const filtered = (all: ThreadRecord[], query: ThreadFilter) =>
  all
    .filter((t) => jsonContains(t.metadata, query.metadata ?? {}))
    .filter((t) => jsonContains(t.values ?? {}, query.values ?? {}))
    .filter((t) => query.ids === undefined || query.ids.includes(t.threadId))
    .filter((t) => !query.status || t.status === query.status);

/**
 * What LangGraph's updateState throws for the client's mistake: a node or channel the graph lacks
 * (InvalidUpdateError), or a removal of a message the state does not hold (the messages reducer's
 * plain Error).
 */
const invalidUpdate = (err: unknown) =>
  (err as { name?: string })?.name === "InvalidUpdateError" ||
  /^Attempting to delete a message with an ID that doesn't exist/.test((err as Error)?.message ?? "")
    ? new AppError(400, "invalid_update", (err as Error).message.slice(0, 300))
    : err;

/**
 * The Agent Server API's threads: a thread is a chat session, owned by its caller. The session's
 * owner record decides who may see it (another user's thread is 404, as if it did not exist);
 * the caller's thread list holds each thread's metadata, status, values and timestamps.
 */
export class ThreadService {
  readonly owners: SessionOwners;
  readonly records: AgentThreads;
  /** the threads' run records (a run waiting its turn makes its thread busy) */
  readonly runs: AgentRuns;

  constructor(
    private readonly backends: Backends,
    private readonly graph?: ChatGraph,
  ) {
    const { dynamo, config } = backends;
    this.owners = new SessionOwners(
      dynamo,
      config.CHECKPOINT_TABLE,
      config.CHECKPOINT_TTL_DAYS,
      config.SESSION_LEASE_MS,
    );
    this.records = new AgentThreads(dynamo, config.CHECKPOINT_TABLE, config.CHECKPOINT_TTL_DAYS);
    this.runs = new AgentRuns(dynamo, config.CHECKPOINT_TABLE);
  }

  async create(userId: string, body: z.infer<typeof ThreadCreate>) {
    const threadId = body.thread_id ?? randomUUID();
    const metadata = body.metadata ?? {};
    // A thread's project is fixed when it starts, as a session's is: metadata.project_id names it.
    const project = identifier().safeParse(metadata.project_id);
    if (!(await this.owners.claim(threadId, userId, project.success ? project.data : null))) {
      // The caller's own, unless its deletion began: its id stays taken until the deletion finishes.
      const owned = await this.owners.session(threadId);
      const existing = owned?.userId === userId && !owned.deleting ? await this.get(userId, threadId) : undefined;
      if (existing && body.if_exists === "do_nothing") return existing;
      throw new AppError(409, "thread_exists", "Thread already exists");
    }
    if (body.thread_id !== undefined) await this.clearLeftovers(threadId);
    const now = new Date().toISOString();
    const record: ThreadRecord = { threadId, userId, metadata, status: "idle", createdAt: now, updatedAt: now };
    await this.records.create(record);
    if (!body.supersteps?.length) return threadJson(record);
    // Its history, written before anyone else can run on it (nobody knows it yet). A superstep the
    // graph refuses refuses the thread: it is deleted with what the steps before wrote.
    await this.chatGraph()
      .bulkUpdateState(
        { configurable: { thread_id: threadId, checkpoint_ns: "" } },
        body.supersteps.map((step) => ({
          updates: step.updates.map((u) => ({ values: u.values ?? null, asNode: u.as_node })),
        })),
      )
      .catch(async (err) => {
        await this.delete(userId, threadId);
        throw invalidUpdate(err);
      });
    return threadJson(await this.settleFromState(userId, threadId, "idle"));
  }

  /**
   * A run's `if_not_exists: "create"`: the thread, made the caller's (in the run's project) when no
   * one has it. Anyone else's stays theirs, and is 404 to the caller as ever.
   */
  async createIfAbsent(userId: string, threadId: string, projectId: string | null = null) {
    if (!ThreadId.safeParse(threadId).success) throw malformedId("thread_id");
    // In the run's project, when it names one: a thread's project is fixed when it starts.
    if (await this.owners.claim(threadId, userId, projectId)) {
      await this.clearLeftovers(threadId);
      const now = new Date().toISOString();
      await this.records.create({ threadId, userId, metadata: {}, status: "idle", createdAt: now, updatedAt: now });
    }
    await this.assertOwned(userId, threadId);
  }

  /** The caller's thread (its owner checked: assertOwned). A session started through /api/chat is a thread too. */
  async get(userId: string, threadId: string) {
    const record = await this.settledIfIdle(
      (await this.records.get(userId, threadId)) ?? this.untracked(userId, threadId),
    );
    // Values too large for the thread's item, or a session from /api/chat: read from its state.
    if (record.values !== undefined) return threadJson(record);
    const snapshot = await this.chatGraph().getState({ configurable: { thread_id: threadId } });
    return threadJson(record, snapshot.createdAt === undefined ? null : valuesDict(snapshot.values));
  }

  async patch(userId: string, threadId: string, metadata: Record<string, unknown>) {
    const updated = await this.records.update(userId, threadId, { metadata });
    if (updated) return threadJson(updated);
    // No item: a session started through /api/chat, or a thread deleted since the route checked it.
    // The item is made under the session's lease, which a deletion holds while it removes the
    // session, so a thread being deleted is not written back into the caller's list.
    const { session, lease } = await this.owners.leaseWaiting(
      threadId,
      userId,
      this.backends.config.SESSION_QUEUE_WAIT_MS,
    );
    if (!session) throw threadNotFound(threadId);
    if (!lease) throw threadBusy();
    try {
      const record: ThreadRecord = { ...this.untracked(userId, threadId), metadata };
      if (await this.records.create(record)) return threadJson(record);
      const merged = await this.records.update(userId, threadId, { metadata });
      if (merged) return threadJson(merged);
      throw threadNotFound(threadId);
    } finally {
      await lease.release();
    }
  }

  /** A page of the caller's threads, and how many match in all (X-Pagination-Total). */
  async search(userId: string, query: z.infer<typeof ThreadSearch>) {
    const few = pLimit(8);
    const records = await Promise.all((await this.records.list(userId)).map((r) => few(() => this.settledIfIdle(r))));
    const found = filtered(records, query);
    const key = (
      { thread_id: "threadId", status: "status", created_at: "createdAt", updated_at: "updatedAt" } as const
    )[query.sort_by];
    found.sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * (query.sort_order === "asc" ? 1 : -1));
    return {
      threads: found.slice(query.offset, query.offset + query.limit).map((t) => threadJson(t)),
      total: found.length,
    };
  }

  async count(userId: string, query: z.infer<typeof ThreadCount>) {
    return filtered(await this.records.list(userId), query).length;
  }

  /**
   * A new thread of the caller's with this one's metadata and whole history (threads.copy): runs
   * on either go their own way from there.
   */
  async copy(userId: string, threadId: string) {
    const source = (await this.records.get(userId, threadId)) ?? this.untracked(userId, threadId);
    const session = await ownedSession(this.owners, userId, threadId, () => threadNotFound(threadId));
    const copyId = randomUUID();
    if (!(await this.owners.claim(copyId, userId, session.projectId ?? null)))
      throw new AppError(409, "thread_exists", "Thread already exists");
    const now = new Date().toISOString();
    const record: ThreadRecord = { ...source, threadId: copyId, status: "idle", createdAt: now, updatedAt: now };
    await this.records.create(record);
    await copyThreadHistory(this.saver(), threadId, copyId);
    return threadJson(await this.settleFromState(userId, copyId, "idle"));
  }

  /**
   * threads.updateState: values written as if `as_node` had returned them, on the latest checkpoint
   * or a named one (a branch). Under the thread's lease, as a run: a thread a run holds is 409.
   */
  async updateState(
    userId: string,
    threadId: string,
    update: { values?: z.infer<typeof StateValues> | null; asNode?: string; checkpointId?: string },
  ) {
    // Taken as a turn takes it (LeaseHolder.turn): a turn that died unfinished is taken out of the
    // state first, so it cannot later take this write out with it.
    const { lease, unfinished } = await this.owners.lease(threadId, userId, { turn: {} });
    if (!lease) throw threadBusy();
    if (unfinished)
      await repairUnfinished(
        { graph: this.chatGraph(), conversations: this.backends.conversations },
        threadId,
        lease,
        unfinished,
      );
    try {
      // A run waiting its turn (a background run not begun) holds the thread as the lease's holder does.
      if ((await this.runs.list(threadId)).some(isWaiting)) throw threadBusy();
      const config = {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: "",
          ...(update.checkpointId ? { checkpoint_id: update.checkpointId } : {}),
        },
      };
      const graph = this.chatGraph();
      // A branch from a checkpoint the thread does not have would start a history with no parent.
      if (update.checkpointId && (await graph.getState(config)).createdAt === undefined)
        throw notFound("checkpoint_not_found", "no such checkpoint in this thread");
      const saved = await graph.updateState(config, update.values ?? null, update.asNode).catch((err) => {
        // The chat graph's first step runs the agent and the compaction side by side, so LangGraph
        // cannot tell which wrote last; a client's write without as_node is taken as the agent's.
        if (update.asNode === undefined && /Ambiguous update/.test((err as Error)?.message ?? ""))
          return graph.updateState(config, update.values ?? null, "agent").catch((again) => {
            throw invalidUpdate(again);
          });
        throw invalidUpdate(err);
      });
      await this.settleFromState(userId, threadId);
      return { checkpoint: saved.configurable ?? null };
    } finally {
      await lease.release();
    }
  }

  /**
   * The thread's status once a run that never began is gone (cancelled, deleted, or refused when
   * a worker took it): still busy while another run holds or waits for the thread (that run's end
   * settles it), otherwise as its state says, or `whenDone`. Given the run that went, only one
   * that was waiting (it alone made the thread busy) changes anything.
   */
  async settleWaiting(
    userId: string,
    threadId: string,
    { gone, whenDone = "idle" }: { gone?: RunRecord; whenDone?: ThreadStatus } = {},
  ): Promise<void> {
    if (gone && !isWaiting(gone)) return;
    if (await this.heldOrAwaited(threadId)) return;
    await this.settleFromState(userId, threadId, whenDone);
  }

  /** Whether a run holds the thread's lease or waits its turn on it: what keeps a thread busy. */
  private async heldOrAwaited(threadId: string): Promise<boolean> {
    const [runs, held] = await Promise.all([this.runs.list(threadId), this.owners.leaseHeld(threadId)]);
    return held || runs.some(isWaiting);
  }

  /**
   * A thread shown busy as it stands: still busy while a run holds or waits for it, else settled
   * from its state. Several writers set and clear `busy` (a run's creation, its end, a cancel, a
   * worker that lost it), and a crash or an unlucky order between them can leave it set with
   * nothing running; a read puts that right. Costs reads only for a thread shown busy.
   */
  private async settledIfIdle(record: ThreadRecord): Promise<ThreadRecord> {
    // Only a mark older than a lease: a fresh one is a run's own, about to hold or settle the thread.
    if (record.status !== "busy" || Date.now() - Date.parse(record.updatedAt) < STALE_BUSY_MS) return record;
    if (await this.heldOrAwaited(record.threadId)) return record;
    return this.settleFromState(record.userId, record.threadId, "idle", record.updatedAt);
  }

  /** The thread's item brought up to its state: values, pending interrupts, and a status to match. */
  private async settleFromState(
    userId: string,
    threadId: string,
    whenDone: ThreadStatus = "idle",
    /** only if the thread's item is still as last updated then (AgentThreads.settle) */
    ifUpdatedAt?: string,
  ) {
    const snapshot = await this.chatGraph().getState({ configurable: { thread_id: threadId } });
    const interrupts = interruptsOf(snapshot);
    const status: ThreadStatus =
      Object.keys(interrupts).length > 0 || snapshot.next.length > 0 ? "interrupted" : whenDone;
    const values = valuesDict(snapshot.values);
    await this.records.settle(userId, threadId, { status, values, interrupts }, ifUpdatedAt);
    return (await this.records.get(userId, threadId)) ?? { ...this.untracked(userId, threadId), status, values };
  }

  /** A session started elsewhere (/api/chat) has no item in the thread list yet. */
  private untracked(userId: string, threadId: string): ThreadRecord {
    const now = new Date().toISOString();
    return { threadId, userId, metadata: {}, status: "idle", createdAt: now, updatedAt: now };
  }

  /** Deletes the thread and everything it left, by the same deletion as DELETE /api/sessions/{id}. */
  async delete(userId: string, threadId: string) {
    await deleteSession(this.backends, userId, threadId, {
      notFound: () => threadNotFound(threadId),
      busy: () => new AppError(409, "thread_busy", "a run on this thread is still going; retry"),
    });
  }

  /** The thread's state, or its state at a checkpoint; an unknown checkpoint is 404. */
  async state(threadId: string, checkpointId?: string) {
    const snapshot = await this.chatGraph().getState({
      configurable: {
        thread_id: threadId,
        ...(checkpointId ? { checkpoint_id: checkpointId, checkpoint_ns: "" } : {}),
      },
    });
    // LangGraph answers a checkpoint it cannot find with an empty snapshot echoing the config asked
    // for; a stored one always has its creation time.
    if (checkpointId && snapshot.createdAt === undefined)
      throw notFound("checkpoint_not_found", "no such checkpoint in this thread");
    return threadState(snapshot);
  }

  async history(threadId: string, query: z.infer<typeof HistoryQuery>) {
    const states = [];
    for await (const snapshot of this.chatGraph().getStateHistory(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      {
        limit: query.limit,
        ...(query.before ? { before: query.before } : {}),
        ...(query.metadata ? { filter: query.metadata } : {}),
      },
    ))
      states.push(threadState(snapshot));
    return states;
  }

  /**
   * Ownership before effect (shared/ownership.ts): every route naming a thread runs this first. An
   * id that cannot be a thread's is 400, as LangGraph's server answers it (it names nothing, so
   * nobody learns anything); anything but the caller's own thread is 404.
   */
  async assertOwned(userId: string, threadId: string | undefined, options: { toDelete?: boolean } = {}) {
    if (!ThreadId.safeParse(threadId).success) throw malformedId("thread_id");
    await ownedSession(this.owners, userId, threadId, () => threadNotFound(threadId), options);
  }

  /**
   * A thread just claimed under an id its client chose: an earlier session under that id may have
   * left items behind (DynamoDB's TTL removes a partition's items one at a time, the owner record
   * possibly first), and they are not this thread's. Cleared under the new owner record, which
   * every other writer of the partition would need, so nothing of the new thread's can be lost.
   */
  private async clearLeftovers(threadId: string): Promise<void> {
    await removeRunLogs(this.backends, threadId);
    await this.saver().deleteThread(threadId, (sk) => sk === OWNER_SORT_KEY);
  }

  private saver() {
    const { dynamo, config } = this.backends;
    return new DynamoDBSaver({
      client: dynamo,
      tableName: config.CHECKPOINT_TABLE,
      ttlDays: config.CHECKPOINT_TTL_DAYS,
    });
  }

  private chatGraph(): ChatGraph {
    if (!this.graph) throw new Error("thread state needs the chat graph");
    return this.graph;
  }
}
