import type { Embeddings } from "@langchain/core/embeddings";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type * as z from "../../shared/zod";
import type { OfflineHint } from "../../shared/models/offline-rules";
import type { AgentStore } from "../../shared/stores/agent-store";
import type { ToolSwitch } from "./groups";

/** What the tools run against; a tool whose needs are missing is left out of the registry. */
export interface ToolDeps {
  store?: AgentStore;
  embeddings?: Embeddings;
  /** memories scoring below this are not worth showing the model */
  minMemoryScore: number;
  /** where a failing store is reported; the model only sees a friendly message */
  onError?: (tool: string, err: unknown) => void;
}

/** Who a call is for: from the run's configuration, never from the model's arguments. */
export interface Scope {
  userId: string;
  projectId: string | null;
  sessionId: string | null;
  /** when the turn began (ISO), for what it writes (NewMemory.turnAt) */
  turnAt?: string | null;
}

export interface ToolContext {
  scope: Scope;
  deps: Required<Pick<ToolDeps, "store" | "embeddings">> & ToolDeps;
  /** aborted at the function's deadline (graph/chat/service.ts) */
  signal?: AbortSignal;
}

/**
 * One tool, in one module: what the model sees (name, description, schema), what it needs, what
 * it does for a scope, what the model is told when it fails, and how the offline stand-in knows
 * when to call it. The chat agent, the support agent's planner and the stand-in all read it
 * through the registry (registry.ts).
 */
export interface AgentTool<S extends z.ZodMiniObject = z.ZodMiniObject> {
  name: string;
  description: string;
  schema: S;
  needs: Array<"store" | "embeddings">;
  /** the sentence the model relays when the tool's backend fails */
  unavailable: string;
  run(args: z.infer<S>, context: ToolContext): Promise<Record<string, unknown>>;
  offline?: OfflineHint;
  /** what the support agent gathers from it: passages it can quote, or facts about the customer */
  gathers?: "passages" | "facts";
  /** the session setting that turns it on or off (./groups.ts) */
  switch: ToolSwitch;
}

export const defineTool = <S extends z.ZodMiniObject>(tool: AgentTool<S>): AgentTool<S> => tool;

/**
 * The caller's scope, from the run's configuration. Tools never take a user or project
 * as an argument: whatever the model writes, it cannot reach another user's data.
 */
export function scopeOf(config: LangGraphRunnableConfig | undefined): Scope {
  const c = config?.configurable ?? {};
  if (typeof c.user_id !== "string" || c.user_id === "") throw new Error("no user in the run's configuration");
  return {
    userId: c.user_id,
    projectId: typeof c.project_id === "string" && c.project_id !== "" ? c.project_id : null,
    sessionId: typeof c.session_id === "string" ? c.session_id : null,
    turnAt: typeof c.turn_at === "string" ? c.turn_at : null,
  };
}

/** Whether a tool can run on these backends. */
export const available = (tool: AgentTool, deps: ToolDeps) => tool.needs.every((need) => deps[need] !== undefined);

/**
 * Runs a tool for a scope; a failure becomes `{success:false, error}` with a message the model
 * can relay, so the chat still answers when a store is down. Arguments are read through the
 * tool's schema first, whoever sent them: LangChain checks the chat agent's, but the support
 * agent's planner calls here directly, and a 5,000-character or NUL-bearing query would otherwise
 * reach the store, and its refusal be told as the store being down.
 */
export async function runTool(tool: AgentTool, args: unknown, context: ToolContext): Promise<Record<string, unknown>> {
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    return { success: false, error: `invalid arguments for ${tool.name}: ${problems}` };
  }
  try {
    return await tool.run(parsed.data as never, context);
  } catch (err) {
    context.deps.onError?.(tool.name, err);
    return { success: false, error: tool.unavailable };
  }
}
