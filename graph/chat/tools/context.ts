import type { Embeddings } from "@langchain/core/embeddings";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentStore } from "../../../shared/stores/agent-store";

export interface ToolDeps {
  store: AgentStore;
  embeddings: Embeddings;
  /** memories scoring below this are not worth showing the model */
  minMemoryScore: number;
  /** where a failing store is reported; the model only sees a friendly message */
  onError?: (tool: string, err: unknown) => void;
}

export interface Scope {
  userId: string;
  projectId: string | null;
  sessionId: string | null;
}

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
  };
}

/**
 * Runs a tool body; a failure becomes `{success:false, error}` with a message the model
 * can relay, so the chat still answers when a store is down.
 */
export async function guarded(
  deps: ToolDeps,
  tool: string,
  unavailable: string,
  body: () => Promise<Record<string, unknown>>,
): Promise<string> {
  try {
    return JSON.stringify(await body());
  } catch (err) {
    deps.onError?.(tool, err);
    return JSON.stringify({ success: false, error: unavailable });
  }
}
