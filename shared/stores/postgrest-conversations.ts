import type { PostgrestClient } from "@supabase/postgrest-js";
import { rpc, unwrap } from "./postgrest";
import type {
  AppendResult,
  Conversation,
  ConversationMessage,
  ConversationStore,
  RecordedTurn,
  TraceStep,
} from "./conversations";
import { page, pageArgs, toSessionSummary } from "./sql-conversations";

/** The Supabase adapter: the same tables and SQL functions, reached over PostgREST. */
export class PostgrestConversationStore implements ConversationStore {
  constructor(private readonly rest: PostgrestClient) {}

  async get(sessionId: string): Promise<Conversation | undefined> {
    const row = unwrap<{
      session_id: string;
      user_id: string;
      messages: ConversationMessage[];
      created_at: string;
      updated_at: string;
    } | null>(
      "agent_conversations read",
      await this.rest
        .from("agent_conversations")
        .select("session_id,user_id,messages,created_at,updated_at")
        .eq("session_id", sessionId)
        .maybeSingle(),
    );
    if (!row) return undefined;
    return {
      sessionId: row.session_id,
      userId: row.user_id,
      messages: row.messages,
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  async recordTurn(t: RecordedTurn): Promise<AppendResult> {
    return rpc<AppendResult>(this.rest, "record_turn", {
      p_session_id: t.sessionId,
      p_user_id: t.userId,
      p_project_id: t.projectId,
      p_session_name: t.sessionName,
      p_messages: t.messages,
      p_turn_id: t.turnId,
      p_trace: t.trace,
    });
  }

  async listSessions(userId: string, { limit, cursor }: { limit: number; cursor?: string }) {
    const rows = await rpc<Record<string, unknown>[]>(this.rest, "list_sessions", pageArgs(userId, limit, cursor));
    return page(rows.map(toSessionSummary), limit);
  }

  async traces(sessionId: string): Promise<Record<string, TraceStep[]>> {
    const rows = unwrap<{ message_id: string; steps: TraceStep[] }[]>(
      "execution_traces read",
      await this.rest.from("execution_traces").select("message_id,steps").eq("session_id", sessionId),
    );
    return Object.fromEntries(rows.map((r) => [r.message_id, r.steps]));
  }

  async deleteSession(sessionId: string, userId: string): Promise<boolean> {
    return rpc<boolean>(this.rest, "delete_session", { p_session_id: sessionId, p_user_id: userId });
  }
}
