import type { PostgrestClient } from "@supabase/postgrest-js";
import type { AppendResult, Conversation, ConversationMessage, ConversationStore } from "./conversations";

/** The Supabase adapter: the same table and SQL function, reached over PostgREST. */
export class PostgrestConversationStore implements ConversationStore {
  constructor(private readonly rest: PostgrestClient) {}

  async get(sessionId: string): Promise<Conversation | undefined> {
    const { data, error } = await this.rest
      .from("agent_conversations")
      .select("session_id,user_id,messages,created_at,updated_at")
      .eq("session_id", sessionId)
      .maybeSingle();
    if (error) throw new Error(`agent_conversations read failed: ${error.message}`, { cause: error });
    if (!data) return undefined;
    const row = data as {
      session_id: string;
      user_id: string;
      messages: ConversationMessage[];
      created_at: string;
      updated_at: string;
    };
    return {
      sessionId: row.session_id,
      userId: row.user_id,
      messages: row.messages,
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  async appendTurn(
    sessionId: string,
    userId: string,
    turnId: string,
    messages: ConversationMessage[],
  ): Promise<AppendResult> {
    const { data, error } = await this.rest.rpc("append_conversation_turn", {
      p_session_id: sessionId,
      p_user_id: userId,
      p_messages: messages,
      p_turn_id: turnId,
    });
    if (error) throw new Error(`append_conversation_turn failed: ${error.message}`, { cause: error });
    return data as AppendResult;
  }
}
