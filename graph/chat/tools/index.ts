import type { ToolDeps } from "./context";
import { searchKnowledgeTool } from "./knowledge";
import { recallMemoryTool, storeMemoryTool } from "./memory";
import { userContextTool } from "./user-context";

export type { ToolDeps } from "./context";

/** The chat agent's tools over Supabase. Without a store the agent runs with none. */
export function agentTools(deps: ToolDeps) {
  return [storeMemoryTool(deps), recallMemoryTool(deps), userContextTool(deps), searchKnowledgeTool(deps)];
}
