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

/** One step of what the agent did for a reply, in order. */
export interface TraceStep {
  type: "node" | "model" | "tool";
  name: string;
  /** epoch milliseconds */
  started_at: number;
  duration_ms?: number;
  /** tool arguments */
  args?: unknown;
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

export interface RecordedTurn {
  sessionId: string;
  userId: string;
  projectId: string | null;
  /** used when the turn creates the session */
  sessionName: string;
  turnId: string;
  messages: ConversationMessage[];
  trace: TraceStep[] | null;
}

export interface SessionSummary {
  session_id: string;
  project_id: string | null;
  name: string;
  created_at: string;
  updated_at: string;
  message_count: number;
}

export type AppendResult = "appended" | "duplicate" | "forbidden";

/**
 * Sessions, their answers-only history and traces, for UIs (Supabase). Two adapters: SQL
 * (PGlite locally, or any Postgres client) and PostgREST (Lambda). Both call the same SQL
 * functions, so the rules live in one place.
 */
export interface ConversationStore {
  get(sessionId: string): Promise<Conversation | undefined>;
  /** Records one turn: messages, the session row (created on the first turn) and the trace. */
  recordTurn(turn: RecordedTurn): Promise<AppendResult>;
  /** The user's sessions, most recently active first; `cursor` continues a previous page. */
  listSessions(
    userId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ sessions: SessionSummary[]; nextCursor?: string }>;
  /** Traces of a session's assistant messages, by message id. */
  traces(sessionId: string): Promise<Record<string, TraceStep[]>>;
  /** Deletes the conversation, traces and session row, for their owner only; false when none. */
  deleteSession(sessionId: string, userId: string): Promise<boolean>;
}

/** Keyset cursor over (updated_at, session_id): stable while sessions keep changing. */
export const encodeCursor = (s: SessionSummary) =>
  Buffer.from(JSON.stringify([s.updated_at, s.session_id])).toString("base64url");

export function decodeCursor(cursor: string): [string, string] | undefined {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string") {
      if (!Number.isNaN(Date.parse(value[0]))) return [value[0], value[1]];
    }
  } catch {
    // fall through
  }
  return undefined;
}
