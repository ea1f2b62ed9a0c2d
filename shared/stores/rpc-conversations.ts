import { iso } from "./agent-store";
import {
  decodeCursor,
  encodeCursor,
  InvalidCursor,
  type AppendResult,
  type Conversation,
  type ConversationMessage,
  type ConversationStore,
  type RecordedTurn,
  type SessionSummary,
  type TraceStep,
} from "./conversations";
import { allRowsCaller, caller, type Rpc } from "./rpc";

/** Every function the conversation store calls, with the argument names it sends (see rpc.ts). */
export const CONVERSATION_STORE_CALLS = {
  get_conversation: ["p_session_id"],
  record_turn: ["p_session_id", "p_user_id", "p_project_id", "p_session_name", "p_messages", "p_turn_id", "p_trace"],
  list_sessions: ["p_user_id", "p_limit", "p_after_updated_at", "p_after_session_id"],
  session_traces: ["p_session_id"],
  delete_session: ["p_session_id", "p_user_id"],
} as const;

// biome-ignore lint/suspicious/noExplicitAny: a row of a function's JSON result, typed by the mapper that reads it
type Row = Record<string, any>;

/** A set-returning function's result (rpc.ts): its rows. */
const rows = (result: unknown) => result as Row[];

const toSessionSummary = (r: Row): SessionSummary => ({
  session_id: r.session_id,
  project_id: r.project_id,
  name: r.name,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  message_count: Number(r.message_count),
});

/** A page of rows asked for with one extra: its presence says there is a next page. */
function page(found: SessionSummary[], limit: number) {
  const sessions = found.slice(0, limit);
  return found.length > limit ? { sessions, nextCursor: encodeCursor(sessions[sessions.length - 1]!) } : { sessions };
}

/** The conversation store over either transport: PostgREST in Lambda, SQL on PGlite locally and in tests. */
export class RpcConversationStore implements ConversationStore {
  private readonly call;
  private readonly allRows;

  constructor(rpc: Rpc) {
    this.call = caller(rpc, CONVERSATION_STORE_CALLS);
    this.allRows = allRowsCaller(rpc, CONVERSATION_STORE_CALLS);
  }

  async get(sessionId: string): Promise<Conversation | undefined> {
    const [row] = rows(await this.call("get_conversation", { p_session_id: sessionId }));
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
    return (await this.call("record_turn", {
      p_session_id: t.sessionId,
      p_user_id: t.userId,
      p_project_id: t.projectId,
      p_session_name: t.sessionName,
      p_messages: t.messages,
      p_turn_id: t.turnId,
      p_trace: t.trace,
    })) as AppendResult;
  }

  /** A cursor this API did not issue is refused before anything is asked of the database. */
  async listSessions(userId: string, { limit, cursor }: { limit: number; cursor?: string }) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && !after) throw new InvalidCursor();
    const found = rows(
      await this.call("list_sessions", {
        p_user_id: userId,
        p_limit: limit + 1,
        p_after_updated_at: after?.[0] ?? null,
        p_after_session_id: after?.[1] ?? null,
      }),
    );
    return page(found.map(toSessionSummary), limit);
  }

  async traces(sessionId: string): Promise<Record<string, TraceStep[]>> {
    // One row per answer: a long session passes PostgREST's max_rows.
    const found = rows(await this.allRows("session_traces", { p_session_id: sessionId }, "message_id"));
    return Object.fromEntries(found.map((r) => [r.message_id, r.steps as TraceStep[]]));
  }

  async deleteSession(sessionId: string, userId: string): Promise<boolean> {
    return (await this.call("delete_session", { p_session_id: sessionId, p_user_id: userId })) === true;
  }
}
