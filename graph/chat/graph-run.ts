import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import {
  type AIMessage,
  type AIMessageChunk,
  type BaseMessage,
  isAIMessage,
  type ToolMessage,
} from "@langchain/core/messages";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import { truncateCodePoints } from "../../shared/text";
import type { ChatGraph } from "./graph";

/** LangGraph's stream modes a run can pass through to its observer. */
export type GraphStreamMode = "values" | "updates" | "messages" | "custom" | "debug" | "tasks" | "checkpoints";

/** What a run's caller is told as the graph runs. Every callback is optional. */
export interface GraphRunObserver {
  onToken?(text: string): void;
  onToolStart?(name: string, args: unknown): void;
  onToolEnd?(name: string, summary: string): void;
  /** LangGraph stream modes to pass through raw to `onChunk` (the Agent Server API's runs) */
  modes?: readonly GraphStreamMode[];
  onChunk?(mode: string, chunk: unknown): void;
  /** every LangChain callback event of the run (streamEvents v2: the Agent Server's "events" mode) */
  onEvent?(event: StreamEvent): void;
}

export interface GraphRunResult {
  /** the last AI message the agent wrote, when the run ended on it (not when it stopped for an interrupt) */
  answer?: AIMessage;
  /** the run stopped before its end: an interrupt (interrupt(), interrupt_before or interrupt_after) */
  interrupted: boolean;
  /** the state's values after the run's last step, when "values" was streamed */
  values?: { messages?: BaseMessage[] };
}

type Input = Parameters<ChatGraph["stream"]>[0];
type Options = Omit<NonNullable<Parameters<ChatGraph["stream"]>[1]>, "streamMode" | "callbacks"> & {
  callbacks: BaseCallbackHandler[];
  runId?: string;
};

/**
 * Streams one run of the chat graph, relaying what the observer asked for: LangGraph's own stream
 * (`graph.stream`), or, when every callback event is wanted, `graph.streamEvents`, whose root
 * `on_chain_stream` events carry the same chunks. "updates" is always read: the answer, the tool
 * calls and an interrupt come from it.
 */
export async function streamGraphRun(
  graph: ChatGraph,
  input: Input,
  options: Options,
  observer: GraphRunObserver,
): Promise<GraphRunResult> {
  const modes = new Set<GraphStreamMode>(["updates", ...(observer.modes ?? [])]);
  if (observer.onToken) modes.add("messages");
  const result: GraphRunResult = { interrupted: false };
  const relay = (mode: string, chunk: unknown) => {
    if (observer.modes?.includes(mode as GraphStreamMode)) observer.onChunk?.(mode, chunk);
    if (mode === "values") result.values = chunk as GraphRunResult["values"];
    if (mode === "messages") {
      const [message, metadata] = chunk as [AIMessageChunk, { langgraph_node?: string }];
      const text = typeof message.content === "string" ? message.content : "";
      if (metadata.langgraph_node === "agent" && text) observer.onToken?.(text);
      return;
    }
    if (mode !== "updates") return;
    const update = chunk as {
      agent?: { messages: BaseMessage[] };
      tools?: { messages: ToolMessage[] };
      __interrupt__?: unknown[];
    };
    if (update.__interrupt__) result.interrupted = true;
    for (const message of update.agent?.messages ?? []) {
      if (!isAIMessage(message)) continue;
      result.answer = message;
      for (const call of message.tool_calls ?? []) observer.onToolStart?.(call.name, call.args);
    }
    for (const message of update.tools?.messages ?? [])
      observer.onToolEnd?.(message.name ?? "tool", summarize(String(message.content)));
  };

  if (observer.onEvent) {
    const runId = options.runId ?? crypto.randomUUID();
    const events = graph.streamEvents(input, { ...options, runId, version: "v2", streamMode: [...modes] });
    for await (const event of events) {
      observer.onEvent(event);
      if (event.event === "on_chain_stream" && event.run_id === runId) {
        const [mode, chunk] = event.data.chunk as [string, unknown];
        relay(mode, chunk);
      }
    }
  } else {
    const stream = await graph.stream(input, { ...options, streamMode: [...modes] });
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) relay(mode, chunk);
  }
  // An answer that still calls tools is a step, not the end: the run stopped before them.
  if (result.interrupted || result.answer?.tool_calls?.length) delete result.answer;
  return result;
}

/** A short summary of a tool result for stream events: its first 200 code points. */
const summarize = (content: string) => truncateCodePoints(content, 200);
