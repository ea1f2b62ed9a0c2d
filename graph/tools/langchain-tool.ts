import { tool as langchainTool, type StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { OFFLINE_HINT } from "../../shared/models/offline-rules";
import { switchMetadata } from "./groups";
import { type AgentTool, runTool, scopeOf, type ToolContext, type ToolDeps } from "./tool";

// Apart from ./tool.ts: binding a tool to a model needs LangChain's tool classes, which the
// knowledge route's search (runTool alone) does not load.

/** The tool as LangChain binds it to a chat model: scoped by the run's configuration, its hint in its metadata. */
export function asLangChainTool(tool: AgentTool, deps: ToolDeps): StructuredToolInterface {
  return langchainTool(
    async (args, config: LangGraphRunnableConfig) =>
      JSON.stringify(
        await runTool(tool, args, {
          scope: scopeOf(config),
          deps: deps as ToolContext["deps"],
          signal: config?.signal,
        }),
      ),
    {
      name: tool.name,
      description: tool.description,
      schema: tool.schema,
      metadata: { ...(tool.offline ? { [OFFLINE_HINT]: tool.offline } : {}), ...switchMetadata(tool.switch) },
    },
  );
}
