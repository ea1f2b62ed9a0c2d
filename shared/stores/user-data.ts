import { caller, type Rpc } from "./rpc";

/** Every function the user-data store calls, with the argument names it sends (see rpc.ts). */
export const USER_DATA_CALLS = {
  erase_user_data: ["p_user_id", "p_session_ids"],
  export_user_data: ["p_user_id"],
  erase_agent_store_items: ["p_user_id"],
  export_agent_store_items: ["p_user_id"],
  session_erased: ["p_session_id", "p_turn_at"],
  idle_sessions: ["p_before", "p_limit"],
  session_idle: ["p_session_id", "p_before"],
} as const;

/** What the database held about a user and removed (erase_user_data). */
export interface ErasedCounts {
  sessions: number;
  transcripts: number;
  traces: number;
  memories: number;
  user_context: number;
  /** the Agent Server store's own items (013_agent_store_items.sql) */
  store_items: number;
}

/** Everything the database holds about a user (export_user_data), as its JSON. */
export interface ExportedUserData {
  sessions: {
    session_id: string;
    project_id: string | null;
    name: string | null;
    created_at: string;
    updated_at: string;
    messages: unknown[];
    traces: Record<string, unknown>;
  }[];
  memories: {
    id: string;
    project_id: string | null;
    content: string;
    category: string | null;
    tags: string[];
    metadata: Record<string, unknown>;
    source_session_id: string | null;
    created_at: string;
    updated_at: string;
    superseded_by: string | null;
  }[];
  /** marks of memories the user deleted (021_forgotten_memories.sql): derived from their words, kept 14 days */
  forgotten_memories: {
    project_id: string | null;
    content_hash: string;
    embedding: number[];
    source_session_id: string | null;
    stated_at: string | null;
    forgotten_at: string;
  }[];
  user_context: Record<string, unknown> | null;
  /** the Agent Server store's own items, any namespace but the memories' */
  store_items: {
    namespace: string[];
    key: string;
    value: Record<string, unknown>;
    created_at: string;
    updated_at: string;
  }[];
}

export interface IdleSession {
  sessionId: string;
  userId: string;
  updatedAt: string;
}

/** A user's data in Supabase as a whole: erasure, export, erased sessions, idle sessions. */
export interface UserDataStore {
  /** Removes everything about the user, tombstoning `sessionIds` and every session the tables know. */
  erase(userId: string, sessionIds: string[]): Promise<ErasedCounts>;
  export(userId: string): Promise<ExportedUserData>;
  /**
   * Whether a turn of the session begun at `turnAt` (unknown: any turn) was erased with its user:
   * its memories must not come back. A turn of a thread made again under the id after the erasure
   * was not (014_tombstones_by_turn_time.sql).
   */
  sessionErased(sessionId: string, turnAt?: string): Promise<boolean>;
  /** Sessions whose last turn was before `before`, oldest first, at most `limit`. */
  idleSessions(before: Date, limit: number): Promise<IdleSession[]>;
  /** Whether the session's last turn (if any) was before `before`: read again under its lease. */
  sessionIdle(sessionId: string, before: Date): Promise<boolean>;
}

/**
 * SQLSTATE of a memory refused because its session was erased (012_user_data.sql): the extraction
 * consumer drops the message instead of retrying it.
 */
export const SESSION_ERASED_SQLSTATE = "P0410";

export class RpcUserData implements UserDataStore {
  private readonly call;

  constructor(rpc: Rpc) {
    this.call = caller(rpc, USER_DATA_CALLS);
  }

  // Two calls each (two transactions over PostgREST): both are idempotent, and erasure is retried
  // whole until every store has forgotten the user (graph/chat/user-erasure.ts).
  async erase(userId: string, sessionIds: string[]): Promise<ErasedCounts> {
    const [counts, items] = await Promise.all([
      this.call("erase_user_data", { p_user_id: userId, p_session_ids: sessionIds }),
      this.call("erase_agent_store_items", { p_user_id: userId }),
    ]);
    return { ...(counts as Omit<ErasedCounts, "store_items">), store_items: Number(items) };
  }

  async export(userId: string): Promise<ExportedUserData> {
    const [data, items] = await Promise.all([
      this.call("export_user_data", { p_user_id: userId }),
      this.call("export_agent_store_items", { p_user_id: userId }),
    ]);
    return {
      ...(data as Omit<ExportedUserData, "store_items">),
      store_items: items as ExportedUserData["store_items"],
    };
  }

  async sessionErased(sessionId: string, turnAt?: string): Promise<boolean> {
    return Boolean(await this.call("session_erased", { p_session_id: sessionId, p_turn_at: turnAt ?? null }));
  }

  async idleSessions(before: Date, limit: number): Promise<IdleSession[]> {
    const rows = (await this.call("idle_sessions", { p_before: before.toISOString(), p_limit: limit })) as {
      session_id: string;
      user_id: string;
      updated_at: string;
    }[];
    return rows.map((r) => ({ sessionId: r.session_id, userId: r.user_id, updatedAt: r.updated_at }));
  }

  async sessionIdle(sessionId: string, before: Date): Promise<boolean> {
    return Boolean(await this.call("session_idle", { p_session_id: sessionId, p_before: before.toISOString() }));
  }
}
