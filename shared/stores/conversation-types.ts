// What the conversation API answers, as types only: the playground's page imports them, so
// nothing here may need Node.
import type { SessionSettings } from "../session-settings";

/** One line of the answers-only history a chat UI shows. */
export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
  created_at: string;
  /** the graph message id; the assistant's doubles as the turn id */
  message_id: string;
  /** images the user sent with the message (their files, not their bytes) */
  attachments?: { file_id: string; name: string; media_type: string }[];
}

export interface Conversation {
  sessionId: string;
  userId: string;
  messages: ConversationMessage[];
  createdAt: string;
  updatedAt: string;
}

/** One step of what the agent did for a reply, in order. */
export interface TraceStep {
  type: "node" | "model" | "tool" | "settings";
  name: string;
  /** epoch milliseconds */
  started_at: number;
  duration_ms?: number;
  /** tool arguments */
  args?: unknown;
  /** the session settings the turn ran with (type "settings") */
  settings?: SessionSettings;
  success?: boolean;
  /**
   * Model token usage, when the model reports it. input_tokens counts every input token,
   * cached or not; cache_read_tokens / cache_write_tokens are the parts read from and
   * written to Bedrock's prompt cache (absent when the model does not cache).
   */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    total_tokens?: number;
    cache_read_tokens?: number;
    cache_write_tokens?: number;
  };
  error?: string;
}

export interface SessionSummary {
  session_id: string;
  project_id: string | null;
  name: string;
  created_at: string;
  updated_at: string;
  message_count: number;
}
