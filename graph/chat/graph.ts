import type { BaseChatModel, BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { toolsCondition } from "@langchain/langgraph/prebuilt";
import { toolsTokens } from "../../shared/models/token-estimate";
import { ChatState, contextWindow, type ChatStateType, type ContextOptions } from "./context";
import { ModelError } from "./errors";
import { repairHistory } from "./history";
import { type ImageRef, withImages } from "./images";
import { enabledTools, settingsOf } from "../tools/groups";
import { systemPrompt } from "./prompt";
import { ExplainingToolNode } from "./tool-node";

export interface ChatGraphDeps {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  checkpointer: BaseCheckpointSaver;
  /** per-call additions to the system prompt (the session's data files), from the run's configuration */
  promptContext?: (config: LangGraphRunnableConfig | undefined) => Promise<string | undefined>;
  /** the context budget, running summary and prompt caching; without it every call gets the whole history */
  context?: ContextOptions;
  /** false for a model declared without tool support: it is bound none, and its prompt says so */
  toolCalling?: boolean;
  /** reads an attached image's bytes at call time (the attachments bucket); absent: images become text stubs */
  readImage?: (ref: ImageRef) => Promise<Uint8Array | undefined>;
  /** other chat models a run's assistant may name (configurable.model), by model id */
  models?: Record<string, BaseChatModel>;
}

/** What the run's assistant says of its agent (configurable): its system prompt, its model. */
function assistantOf(config: LangGraphRunnableConfig | undefined) {
  const c = config?.configurable ?? {};
  return {
    systemPrompt: typeof c.system_prompt === "string" ? c.system_prompt : undefined,
    model: typeof c.model === "string" ? c.model : undefined,
  };
}

/**
 * agent -> (tool calls?) -> tools -> agent ... -> END, over ChatState (messages plus the
 * running summary). The input of a run is only the new message: history comes from the
 * checkpoint (thread_id = session_id) and each node returns only what it adds. With a
 * context budget, each call is fitted to it and `compact` runs beside the first call.
 */
export function buildChatGraph({
  model,
  tools: allTools,
  checkpointer,
  context,
  promptContext,
  toolCalling = true,
  readImage,
  models = {},
}: ChatGraphDeps) {
  const tools = toolCalling ? allTools : [];
  // Bedrock's cache_control option adds the tools' cache point (see prompt-cache.ts).
  const cacheOption = (
    context?.cache ? { cache_control: { type: "ephemeral" } } : {}
  ) as Partial<BaseChatModelCallOptions>;
  // One binding per model and set of tools a session's settings turn on, made once and reused.
  const bindings = new Map<string, ReturnType<BaseChatModel["withConfig"]>>();
  const bindingFor = (enabled: StructuredToolInterface[], modelId: string | undefined) => {
    const chosen = (modelId !== undefined ? models[modelId] : undefined) ?? model;
    const key = `${modelId ?? ""}|${enabled.map((t) => t.name).join(",")}`;
    let bound = bindings.get(key);
    if (!bound) {
      bound = enabled.length > 0 ? chosen.bindTools!(enabled, cacheOption) : chosen.withConfig(cacheOption);
      bindings.set(key, bound);
    }
    return bound;
  };
  // Sized for every tool (name, description, JSON schema as the model is sent them): a session
  // with fewer is sent less, so the window errs on the safe side.
  const window =
    context &&
    contextWindow(systemPrompt(tools, { toolCalling }), toolsTokens(tools.map((t) => convertToOpenAITool(t))), context);

  async function agent(state: ChatStateType, config?: LangGraphRunnableConfig) {
    try {
      // The run's assistant's prompt and model (read from its configuration on every run), else the deployment's.
      const assistant = assistantOf(config);
      const enabled = enabledTools(tools, settingsOf(config));
      const bound = bindingFor(enabled, assistant.model);
      const prompt = systemPrompt(enabled, { toolCalling, intro: assistant.systemPrompt });
      // Repaired before every call: a crash can leave a history Converse would reject (./history.ts).
      const messages = repairHistory(state.messages);
      const extra = await promptContext?.(config);
      if (!window) {
        const system = new SystemMessage(extra ? `${prompt}\n\n${extra}` : prompt);
        return { messages: [await bound.invoke(await withImages([system, ...messages], readImage), config)] };
      }
      const input = window.modelInput({ ...state, messages }, extra, prompt);
      // Images are read for the turns the window keeps, and only now (./images.ts).
      const response = await bound.invoke(await withImages(input.messages, readImage), config);
      const tokenRatio = window.calibrate(response, input.estimate);
      return { messages: [response], ...(tokenRatio !== undefined ? { tokenRatio } : {}) };
    } catch (err) {
      throw new ModelError(err);
    }
  }

  const graph = new StateGraph(ChatState)
    .addNode("agent", agent)
    .addNode("tools", new ExplainingToolNode(tools))
    .addEdge(START, "agent")
    // LangGraph's own router: to "tools" while the last message calls one, else to the end.
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent");
  if (!window) return graph.compile({ checkpointer });
  // Compaction runs beside the turn's first agent call, off the reply path (context.ts).
  return graph
    .addNode("compact", (state: ChatStateType) => window.compact(state))
    .addEdge(START, "compact")
    .addEdge("compact", END)
    .compile({ checkpointer }) as unknown as ReturnType<typeof graph.compile>;
}

export type ChatGraph = ReturnType<typeof buildChatGraph>;
