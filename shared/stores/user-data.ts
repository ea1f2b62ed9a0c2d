import { caller, type Rpc } from "./rpc";

/** Every function the user-data store calls, with the argument names it sends (see rpc.ts). */
export const USER_DATA_CALLS = {
  erase_user_data: ["p_user_id", "p_session_ids"],
  export_user_data: ["p_user_id"],
  session_erased: ["p_session_id"],
  idle_sessions: ["p_before", "p_limit"],
} as const;

/** What the database held about a user and removed (erase_user_data). */
export interface ErasedCounts {
  sessions: number;
  transcripts: number;
  traces: number;
  memories: number;
  user_context: number;
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
  user_context: Record<string, unknown> | null;
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
  /** Whether the session was erased with its user: its memories must not come back. */
  sessionErased(sessionId: string): Promise<boolean>;
  /** Sessions whose last turn was before `before`, oldest first, at most `limit`. */
  idleSessions(before: Date, limit: number): Promise<IdleSession[]>;
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

  async erase(userId: string, sessionIds: string[]): Promise<ErasedCounts> {
    return (await this.call("erase_user_data", { p_user_id: userId, p_session_ids: sessionIds })) as ErasedCounts;
  }

  async export(userId: string): Promise<ExportedUserData> {
    return (await this.call("export_user_data", { p_user_id: userId })) as ExportedUserData;
  }

  async sessionErased(sessionId: string): Promise<boolean> {
    return Boolean(await this.call("session_erased", { p_session_id: sessionId }));
  }

  async idleSessions(before: Date, limit: number): Promise<IdleSession[]> {
    const rows = (await this.call("idle_sessions", { p_before: before.toISOString(), p_limit: limit })) as {
      session_id: string;
      user_id: string;
      updated_at: string;
    }[];
    return rows.map((r) => ({ sessionId: r.session_id, userId: r.user_id, updatedAt: r.updated_at }));
  }
}
