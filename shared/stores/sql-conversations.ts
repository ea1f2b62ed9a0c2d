import { iso } from "./agent-store";
import {
  decodeCursor,
  InvalidCursor,
  encodeCursor,
  type AppendResult,
  type Conversation,
  type ConversationMessage,
  type ConversationStore,
  type RecordedTurn,
  type SessionSummary,
  type TraceStep,
} from "./conversations";
import type { SqlClient } from "./sql";

// biome-ignore lint/suspicious/noExplicitAny: a SQL row, typed by the mapper that reads it
type Row = Record<string, any>;

export const toSessionSummary = (r: Row): SessionSummary => ({
  session_id: r.session_id,
  project_id: r.project_id,
  name: r.name,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  message_count: Number(r.message_count),
});

/** A page of rows asked for with one extra: its presence says there is a next page. */
export function page(rows: SessionSummary[], limit: number) {
  const sessions = rows.slice(0, limit);
  return rows.length > limit ? { sessions, nextCursor: encodeCursor(sessions[sessions.length - 1]!) } : { sessions };
}

/** The list_sessions arguments for a page request; a cursor this API did not issue is refused. */
export function pageArgs(userId: string, limit: number, cursor?: string) {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  if (cursor !== undefined && !after) throw new InvalidCursor();
  return {
    p_user_id: userId,
    p_limit: limit + 1,
    p_after_updated_at: after?.[0] ?? null,
    p_after_session_id: after?.[1] ?? null,
  };
}

export class SqlConversationStore implements ConversationStore {
  constructor(private readonly db: SqlClient) {}

  async get(sessionId: string): Promise<Conversation | undefined> {
    const { rows } = await this.db.query<Row>(
      "select session_id, user_id, messages, created_at, updated_at from agent_conversations where session_id = $1",
      [sessionId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      sessionId: row.session_id,
      userId: row.user_id,
      messages: row.messages as ConversationMessage[],
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  }

  async recordTurn(t: RecordedTurn): Promise<AppendResult> {
    const { rows } = await this.db.query<{ result: AppendResult }>(
      "select record_turn($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb) as result",
      [
        t.sessionId,
        t.userId,
        t.projectId,
        t.sessionName,
        JSON.stringify(t.messages),
        t.turnId,
        t.trace ? JSON.stringify(t.trace) : null,
      ],
    );
    return rows[0]!.result;
  }

  async listSessions(userId: string, { limit, cursor }: { limit: number; cursor?: string }) {
    const a = pageArgs(userId, limit, cursor);
    const { rows } = await this.db.query<Row>("select * from list_sessions($1, $2, $3, $4)", [
      a.p_user_id,
      a.p_limit,
      a.p_after_updated_at,
      a.p_after_session_id,
    ]);
    return page(rows.map(toSessionSummary), limit);
  }

  async traces(sessionId: string): Promise<Record<string, TraceStep[]>> {
    const { rows } = await this.db.query<Row>("select message_id, steps from execution_traces where session_id = $1", [
      sessionId,
    ]);
    return Object.fromEntries(rows.map((r) => [r.message_id, r.steps as TraceStep[]]));
  }

  async deleteSession(sessionId: string, userId: string): Promise<boolean> {
    const { rows } = await this.db.query<{ deleted: boolean }>("select delete_session($1, $2) as deleted", [
      sessionId,
      userId,
    ]);
    return rows[0]!.deleted;
  }
}
