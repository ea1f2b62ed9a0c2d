import type { AppendResult, Conversation, ConversationMessage, ConversationStore } from "./conversations";
import type { SqlClient } from "./sql";
import { iso } from "./agent-store";

interface Row {
  session_id: string;
  user_id: string;
  messages: ConversationMessage[];
  created_at: Date | string;
  updated_at: Date | string;
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
      messages: row.messages,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  }

  async appendTurn(
    sessionId: string,
    userId: string,
    turnId: string,
    messages: ConversationMessage[],
  ): Promise<AppendResult> {
    const { rows } = await this.db.query<{ result: AppendResult }>(
      "select append_conversation_turn($1, $2, $3::jsonb, $4) as result",
      [sessionId, userId, JSON.stringify(messages), turnId],
    );
    return rows[0]!.result;
  }
}
