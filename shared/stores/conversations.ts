/** One line of the answers-only history a chat UI shows. */
export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
  created_at: string;
  /** the graph message id; the assistant's doubles as the turn id */
  message_id: string;
}

export interface Conversation {
  sessionId: string;
  userId: string;
  messages: ConversationMessage[];
  createdAt: string;
  updatedAt: string;
}

export type AppendResult = "appended" | "duplicate" | "forbidden";

/**
 * The conversation history for UIs (Supabase `agent_conversations`). Two adapters:
 * SQL (PGlite locally, or any Postgres client) and PostgREST (supabase-js in Lambda).
 * Both call the same SQL function, so the append rules live in one place.
 */
export interface ConversationStore {
  get(sessionId: string): Promise<Conversation | undefined>;
  /** Appends one turn; creates the session for `userId` on its first turn. */
  appendTurn(sessionId: string, userId: string, turnId: string, messages: ConversationMessage[]): Promise<AppendResult>;
}
