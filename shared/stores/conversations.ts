import type { ConversationMessage, Conversation, SessionSummary, TraceStep } from "./conversation-types";
import { decodeJsonCursor, encodeJsonCursor } from "../json-cursor";

export type { Conversation, ConversationMessage, SessionSummary, TraceStep } from "./conversation-types";

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

export type AppendResult = "appended" | "duplicate" | "forbidden";

/**
 * Sessions, their answers-only history and traces, for UIs (Supabase). One implementation,
 * RpcConversationStore, over either transport (rpc.ts): the rules live in the migrations' SQL
 * functions, which it calls by name.
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

/** A cursor this API did not issue; the sessions route checks first and answers 400. */
export class InvalidCursor extends Error {
  constructor() {
    super("cursor is not one this API issued");
    this.name = "InvalidCursor";
  }
}

/** Keyset cursor over (updated_at, session_id): stable while sessions keep changing. */
export const encodeCursor = (s: SessionSummary) => encodeJsonCursor([s.updated_at, s.session_id]);

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The position a cursor this API issued names, or undefined for anything else: only what
 * encodeCursor writes (a real instant in toISOString's form and a session UUID) is accepted, so
 * a crafted cursor ("1", an impossible date, a far-off year) never reaches Postgres.
 */
export function decodeCursor(cursor: string): [string, string] | undefined {
  const value = decodeJsonCursor(cursor, 512);
  if (value?.length !== 2) return undefined;
  const [at, sessionId] = value;
  if (typeof at !== "string" || typeof sessionId !== "string") return undefined;
  if (!ISO_MILLIS.test(at) || !UUID.test(sessionId)) return undefined;
  const time = new Date(at);
  if (Number.isNaN(time.getTime()) || time.toISOString() !== at) return undefined;
  // JavaScript has a year 0, Postgres's timestamptz does not (it would refuse the query).
  if (time.getUTCFullYear() < 1) return undefined;
  return [at, sessionId];
}
