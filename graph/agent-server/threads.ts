import { randomUUID } from "node:crypto";
import type * as z from "zod";
import type { Backends } from "../../shared/backends";
import { AppError, notFound } from "../../shared/errors";
import { AgentThreads, type ThreadRecord } from "../../shared/stores/agent-threads";
import { SessionOwners } from "../../shared/stores/session-owners";
import { ownedSession } from "../../shared/ownership";
import { identifier } from "../../shared/text";
import type { ChatGraph } from "../chat/graph";
import { deleteSession } from "../chat/session-deletion";
import type { HistoryQuery, ThreadCreate, ThreadSearch } from "./requests";
import { threadState } from "./serialize";

const threadNotFound = () => notFound("thread_not_found", "no such thread");

/** A thread as the API shows it (`Thread` in the SDK's types). */
export function threadJson(record: ThreadRecord) {
  return {
    thread_id: record.threadId,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    metadata: record.metadata,
    status: record.status,
    values: null,
    interrupts: {},
  };
}

const matches = (metadata: Record<string, unknown>, filter: Record<string, unknown>) =>
  Object.entries(filter).every(([k, v]) => JSON.stringify(metadata[k]) === JSON.stringify(v));

/**
 * The Agent Server API's threads: a thread is a chat session, owned by its caller. The session's
 * owner record decides who may see it (another user's thread is 404, as if it did not exist);
 * the caller's thread list holds each thread's metadata and timestamps.
 */
export class ThreadService {
  readonly owners: SessionOwners;
  readonly records: AgentThreads;

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
  }

  async create(userId: string, body: z.infer<typeof ThreadCreate>) {
    const threadId = body.thread_id ?? randomUUID();
    const metadata = body.metadata ?? {};
    // A thread's project is fixed when it starts, as a session's is: metadata.project_id names it.
    const project = identifier().safeParse(metadata.project_id);
    if (!(await this.owners.claim(threadId, userId, project.success ? project.data : null))) {
      const existing = (await this.owners.owner(threadId)) === userId ? await this.get(userId, threadId) : undefined;
      if (existing && body.if_exists === "do_nothing") return existing;
      throw new AppError(409, "thread_exists", "a thread with this id already exists");
    }
    const now = new Date().toISOString();
    const record: ThreadRecord = { threadId, userId, metadata, status: "idle", createdAt: now, updatedAt: now };
    await this.records.create(record);
    return threadJson(record);
  }

  /** The caller's thread (its owner checked: assertOwned). A session started through /api/chat is a thread too. */
  async get(userId: string, threadId: string) {
    const record = await this.records.get(userId, threadId);
    if (record) return threadJson(record);
    const now = new Date().toISOString();
    return threadJson({ threadId, userId, metadata: {}, status: "idle", createdAt: now, updatedAt: now });
  }

  async patch(userId: string, threadId: string, metadata: Record<string, unknown>) {
    const updated = await this.records.update(userId, threadId, { metadata });
    if (updated) return threadJson(updated);
    const now = new Date().toISOString();
    const record: ThreadRecord = { threadId, userId, metadata, status: "idle", createdAt: now, updatedAt: now };
    await this.records.create(record);
    return threadJson(record);
  }

  async search(userId: string, query: z.infer<typeof ThreadSearch>) {
    const all = await this.records.list(userId);
    const found = all
      .filter((t) => matches(t.metadata, query.metadata ?? {}))
      .filter((t) => query.ids === undefined || query.ids.includes(t.threadId))
      .filter((t) => query.status === undefined || t.status === query.status);
    const key = (
      { thread_id: "threadId", status: "status", created_at: "createdAt", updated_at: "updatedAt" } as const
    )[query.sort_by];
    found.sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * (query.sort_order === "asc" ? 1 : -1));
    return found.slice(query.offset, query.offset + query.limit).map(threadJson);
  }

  /** Deletes the thread and everything it left, by the same deletion as DELETE /api/sessions/{id}. */
  async delete(userId: string, threadId: string) {
    await deleteSession(this.backends, userId, threadId, {
      notFound: threadNotFound,
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
      { limit: query.limit, ...(query.before ? { before: query.before } : {}) },
    ))
      states.push(threadState(snapshot));
    return states;
  }

  /** Ownership before effect (shared/ownership.ts): every route naming a thread runs this first. */
  async assertOwned(userId: string, threadId: string | undefined) {
    await ownedSession(this.owners, userId, threadId, threadNotFound);
  }

  private chatGraph(): ChatGraph {
    if (!this.graph) throw new Error("thread state needs the chat graph");
    return this.graph;
  }
}
