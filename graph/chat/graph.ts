import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { ModelError } from "./errors";
import { systemPrompt } from "./prompt";

export interface ChatGraphDeps {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  checkpointer: BaseCheckpointSaver;
}

/**
 * agent -> (tool calls?) -> tools -> agent ... -> END, over MessagesAnnotation.
 * The input of a run is only the new message: history comes from the checkpoint
 * (thread_id = session_id) and each node returns only what it adds.
 */
export function buildChatGraph({ model, tools, checkpointer }: ChatGraphDeps) {
  const bound = tools.length > 0 ? model.bindTools!(tools) : model;
  const prompt = new SystemMessage(systemPrompt(tools));

  async function agent(state: typeof MessagesAnnotation.State, config?: Parameters<typeof bound.invoke>[1]) {
    try {
      const response = await bound.invoke([prompt, ...state.messages], config);
      return { messages: [response] };
    } catch (err) {
      throw new ModelError(err);
    }
  }

  return (
    new StateGraph(MessagesAnnotation)
      .addNode("agent", agent)
      .addNode("tools", new ToolNode(tools))
      .addEdge(START, "agent")
      // LangGraph's own router: to "tools" while the last message calls one, else to the end.
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile({ checkpointer })
  );
}

export type ChatGraph = ReturnType<typeof buildChatGraph>;
