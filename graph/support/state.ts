import { Annotation } from "@langchain/langgraph";

export interface ChatLine {
  role: "user" | "assistant";
  content: string;
}

export interface PlannedCall {
  tool_name: string;
  parameters: Record<string, unknown>;
  reasoning: string;
}

export interface ToolResult {
  tool_name: string;
  success: boolean;
  data: unknown;
  error: string | null;
  execution_time_ms: number;
  timestamp: string;
}

export interface Coverage {
  data_sufficient: boolean;
  coverage_score: number;
  missing_data: string[];
  reasoning: string;
}

/** One Plan → Gather → Coverage iteration, kept as it was: hops are only ever appended. */
export interface Hop {
  /** the customer part this hop worked on: a conversation's later messages get their own hops */
  part_id: string;
  number: number;
  plan: { user_query: string; reasoning: string; tool_calls: PlannedCall[] };
  gather: { tool_results: ToolResult[]; total_execution_time_ms: number; success_rate: number };
  coverage: Coverage;
}

const last = <T>(fallback: T) => Annotation<T>({ reducer: (_current, update) => update, default: () => fallback });
const merged = () =>
  Annotation<Record<string, unknown>>({
    reducer: (current, update) => ({ ...current, ...update }),
    default: () => ({}),
  });

/**
 * The support agent's state. Accumulated data (tool_data,
 * docs_data) merges across hops under keys that name the part and hop; hops are appended,
 * never rewritten. Everything else is the current turn's and is reset by initialize.
 */
export const SupportState = Annotation.Root({
  conversation_id: last(""),
  part_id: last(""),
  messages: last<ChatLine[]>([]),
  user_email: last<string | null>(null),
  admin_id: last(""),
  available_tools: last<string[]>([]),
  tool_data: merged(),
  docs_data: merged(),
  hops: Annotation<Hop[]>({ reducer: (current, update) => [...current, ...update], default: () => [] }),
  max_hops: last(2),
  /** the plan and gather of the hop in progress, until coverage appends the whole hop */
  current_plan: last<Hop["plan"] | null>(null),
  current_gather: last<Hop["gather"] | null>(null),
  draft: last<{ reply: string; route_to_team: boolean; reasoning: string } | null>(null),
  validate: last<{ valid: boolean; issues: string[]; reasoning: string } | null>(null),
  escalate: last<{ reason: string; source: string } | null>(null),
  response_delivery: last<"sent" | "duplicate" | "escalated" | "ignored" | null>(null),
  /** why the notified part was not answered: it is not a customer's message in this conversation */
  ignored_reason: last<string | null>(null),
  finalize: last<{ status: string; snoozed_until: string | null } | null>(null),
  next_node: last<string | null>(null),
  escalation_reason: last<string | null>(null),
  response: last<string | null>(null),
  error: last<string | null>(null),
});

export type SupportStateType = typeof SupportState.State;
export type SupportUpdate = typeof SupportState.Update;

/** This turn's hops. */
export const hopsOf = (state: SupportStateType) => state.hops.filter((h) => h.part_id === state.part_id);
