import type { StructuredToolInterface } from "@langchain/core/tools";
import { currentTime } from "./current-time";
import { searchKnowledge } from "./knowledge-search";
import { recallMemory } from "./memory-recall";
import { storeMemory } from "./memory-store";
import { asLangChainTool } from "./langchain-tool";
import { available, type AgentTool, type ToolDeps } from "./tool";
import { userContext } from "./user-context";

/**
 * Every tool the agents can use, one module each. Adding a tool over existing data is one file
 * plus its line here (docs/adding-a-tool.md). The chat agent binds those its backends allow; the
 * support agent's planner invokes them by name; the offline stand-in reads each one's hint.
 */
export const TOOLS: readonly AgentTool[] = [storeMemory, recallMemory, searchKnowledge, userContext, currentTime];

/** The tools these backends can run. Without a store the agent runs with none. */
export function toolsFor(deps: ToolDeps): AgentTool[] {
  return TOOLS.filter((tool) => available(tool, deps));
}

/** The chat agent's tools, as LangChain binds them. */
export function chatTools(deps: ToolDeps): StructuredToolInterface[] {
  return toolsFor(deps).map((tool) => asLangChainTool(tool, deps));
}

export function toolNamed(name: string): AgentTool | undefined {
  return TOOLS.find((tool) => tool.name === name);
}
