import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { RunnableLambda } from "@langchain/core/runnables";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { randomUUID } from "node:crypto";
import { factsIn } from "../facts";
import { truncateCodePoints } from "../text";
import { SUPPORT_RULES } from "./offline-support-rules";

/** Tool names the offline model knows when to call. The agent's tools use the same names. */
export const OFFLINE_TOOL_RULES = {
  storeMemory: "store_memory",
  recallMemory: "recall_memory",
  searchKnowledge: "search_knowledge_base",
  userContext: "get_user_context",
} as const;

const REMEMBER = /^\s*(?:please\s+)?remember(?:\s+that)?[\s,:]+(.+?)\s*$/is;
const QUESTION_START =
  /^\s*(what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|can|could|should|would|will|have|has|tell me|show me|find)\b/i;
const ABOUT_ACCOUNT = /\b(plan|subscription|tier|usage|quota|limit|account|billing|preferences?|settings)\b/i;
const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening))\b[\s!.]*$/i;

interface OfflineCallOptions extends BaseChatModelCallOptions {
  tools?: ReturnType<typeof convertToOpenAITool>[];
}

/**
 * A deterministic, rule-based stand-in for Bedrock, used when no BEDROCK_MODEL_ID is
 * set. It is not a language model: it follows a few rules so that the whole agent
 * (tool calls, tool loop, streaming) runs offline and in tests.
 *
 * - "remember (that) X"  -> calls store_memory with X
 * - a question           -> calls recall_memory and search_knowledge_base (and get_user_context when it
 *                           is about the account), then answers from their results
 * - anything else        -> a plain reply
 *
 * A rule whose tool is not bound falls through to a plain reply.
 *
 * Structured output (withStructuredOutput binds one tool and expects a call to it) is
 * answered by rules for the schemas this project asks for: `memory_facts` reads facts
 * out of the <user_message> of the prompt with shared/facts.ts; `session_name` takes the
 * message's first five words.
 */
export class OfflineChatModel extends BaseChatModel<OfflineCallOptions> {
  private readonly streamDelayMs: number;

  constructor(fields: { streamDelayMs?: number } = {}) {
    super({});
    this.streamDelayMs = fields.streamDelayMs ?? 0;
  }

  static override lc_name() {
    return "OfflineChatModel";
  }

  _llmType(): string {
    return "offline-stand-in";
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<OfflineCallOptions>) {
    return this.withConfig({
      tools: tools.map((t) => convertToOpenAITool(t)),
      ...kwargs,
    } as Partial<OfflineCallOptions>);
  }

  /**
   * Structured output through the same rules: bind one tool named after the schema and
   * return the arguments of the call the rules make to it. (The base implementation only
   * accepts message chunks from invoke.)
   */
  override withStructuredOutput(schema: unknown, config?: { name?: string }): any {
    const name = config?.name ?? "extract";
    const bound = this.bindTools([
      { type: "function", function: { name, description: name, parameters: { type: "object" } } },
    ]);
    return RunnableLambda.from(async (input: BaseLanguageModelInput, options?: Partial<OfflineCallOptions>) => {
      const message = (await bound.invoke(input, options)) as AIMessage;
      const call = message.tool_calls?.find((c) => c.name === name);
      if (!call) throw new Error(`the offline model has no rule for structured output "${name}"`);
      return call.args;
    });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const message = this.respond(messages, options);
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }

  /** Streams the reply word by word; a tool call arrives as one chunk, as Bedrock's toolUse block does. */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = this.respond(messages, options);
    const id = message.id;
    if (message.tool_calls?.length) {
      yield new ChatGenerationChunk({
        text: "",
        message: new AIMessageChunk({
          id,
          content: "",
          tool_call_chunks: message.tool_calls.map((c, index) => ({
            id: c.id,
            name: c.name,
            args: JSON.stringify(c.args),
            index,
            type: "tool_call_chunk" as const,
          })),
        }),
      });
      return;
    }
    const words = String(message.content).split(/(?<= )/);
    for (const [i, word] of words.entries()) {
      // A generation pace, so a local client sees tokens arrive over time as it would from Bedrock.
      if (i > 0 && this.streamDelayMs > 0) await new Promise((r) => setTimeout(r, this.streamDelayMs));
      const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ id, content: word }) });
      yield chunk;
      await runManager?.handleLLMNewToken(word, undefined, undefined, undefined, undefined, { chunk });
    }
  }

  private respond(messages: BaseMessage[], options: OfflineCallOptions): AIMessage {
    const bound = new Set((options.tools ?? []).map((t) => t.function.name));
    const id = `offline-${randomUUID()}`;
    const last = messages[messages.length - 1];
    if (last instanceof ToolMessage || last?.getType() === "tool") {
      return new AIMessage({ id, content: answerFromTools(messages) });
    }
    const text = typeof last?.content === "string" ? last.content.trim() : "";
    for (const [name, respond] of Object.entries(STRUCTURED)) {
      if (bound.has(name)) return toolCalls(id, [[name, respond(text)]]);
    }
    const remembered = REMEMBER.exec(text);
    if (remembered && bound.has(OFFLINE_TOOL_RULES.storeMemory)) {
      return toolCalls(id, [[OFFLINE_TOOL_RULES.storeMemory, { content: remembered[1]!.replace(/[.!]+$/, "") }]]);
    }
    if (isQuestion(text)) {
      const calls: [string, Record<string, unknown>][] = [
        OFFLINE_TOOL_RULES.recallMemory,
        OFFLINE_TOOL_RULES.searchKnowledge,
      ]
        .filter((name) => bound.has(name))
        .map((name) => [name, { query: text }]);
      if (ABOUT_ACCOUNT.test(text) && bound.has(OFFLINE_TOOL_RULES.userContext))
        calls.push([OFFLINE_TOOL_RULES.userContext, {}]);
      if (calls.length > 0) return toolCalls(id, calls);
    }
    return new AIMessage({ id, content: plainReply(text) });
  }
}

/** Rule-based answers to the structured outputs this project asks for, by tool name. */
const STRUCTURED: Record<string, (prompt: string) => Record<string, unknown>> = {
  memory_facts: (prompt) => ({ facts: factsIn(/<user_message>([\s\S]*?)<\/user_message>/.exec(prompt)?.[1] ?? "") }),
  ...SUPPORT_RULES,
  session_name: (prompt) => ({
    name: prompt
      .trim()
      .split(/\s+/)
      .slice(0, 5)
      .join(" ")
      .replace(/[.,;:!?]+$/, ""),
  }),
};

function isQuestion(text: string): boolean {
  return text.endsWith("?") || QUESTION_START.test(text);
}

function toolCalls(id: string, calls: [string, Record<string, unknown>][]): AIMessage {
  return new AIMessage({
    id,
    content: "",
    tool_calls: calls.map(([name, args]) => ({ id: `call-${randomUUID()}`, name, args, type: "tool_call" as const })),
  });
}

/** Answers from the tool results that follow the model's last tool-calling message. */
function answerFromTools(messages: BaseMessage[]): string {
  const results: ToolMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.getType() === "tool"; i--)
    results.unshift(messages[i] as ToolMessage);
  const found: string[] = [];
  const problems: string[] = [];
  for (const result of results) {
    const output = parseToolOutput(String(result.content));
    if (output.success === false || result.status === "error") {
      const problem = String(output.error ?? output.text ?? "a tool failed");
      // Saving is what the user asked for: say plainly that it did not happen, and why.
      if (result.name === OFFLINE_TOOL_RULES.storeMemory) return `I couldn't save that. ${plainProblem(problem)}`;
      problems.push(problem);
      continue;
    }
    if (result.name === OFFLINE_TOOL_RULES.storeMemory) return `Got it. ${String(output.message ?? "Saved.")}`;
    if (typeof output.summary === "string") found.push(`- ${output.summary}`);
    // The best three of each tool: the stand-in quotes, it cannot summarise.
    for (const item of ((output.results as { content: string; source?: string }[] | undefined) ?? []).slice(0, 3)) {
      found.push(item.source ? `- ${item.content} (${item.source})` : `- ${item.content}`);
    }
    if (output.text && !/^no (matching|relevant|results)/i.test(output.text)) found.push(`- ${output.text}`);
  }
  const notes = problems.length > 0 ? `\n(${problems.join(" ")})` : "";
  if (found.length === 0) return `I don't have anything on that yet.${notes}`;
  return `Here is what I found:\n${found.join("\n")}${notes}`;
}

/** A tool's explanation without the instructions meant for a model ("Tell the user…"). */
const plainProblem = (problem: string) => problem.replace(/\s*Tell the user plainly;.*$/s, "");

/** Tool outputs are JSON objects here; anything else is kept as text. */
function parseToolOutput(content: string): Record<string, unknown> & { text?: string } {
  try {
    const parsed = JSON.parse(content);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // plain text output
  }
  return { text: content.trim() };
}

function plainReply(text: string): string {
  if (GREETING.test(text)) return "Hello! How can I help you today?";
  if (text.length === 0) return "I'm here. What would you like to talk about?";
  return `I hear you: "${truncateCodePoints(text, 200)}". Ask me a question, or tell me something to remember.`;
}
