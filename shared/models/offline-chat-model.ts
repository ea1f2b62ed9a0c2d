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
import { imageSize } from "image-size";
import { truncateCodePoints } from "../text";
import { hintOf, structuredRule, type OfflineHint } from "./offline-rules";
import { messagesTokens, messageText, textTokens, toolsTokens } from "./token-estimate";

const REMEMBER = /^\s*(?:please\s+)?remember(?:\s+that)?[\s,:]+(.+?)\s*$/is;
const QUESTION_START =
  /^\s*(what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|can|could|should|would|will|have|has|tell me|show me|find)\b/i;
const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening))\b[\s!.]*$/i;

interface OfflineCallOptions extends BaseChatModelCallOptions {
  tools?: ReturnType<typeof convertToOpenAITool>[];
  /** each bound tool's hint (offline-rules.ts), by name */
  hints?: Record<string, OfflineHint>;
}

/**
 * A deterministic, rule-based stand-in for Bedrock, used when no BEDROCK_MODEL_ID is
 * set. It is not a language model: it follows a few rules so that the whole agent
 * (tool calls, tool loop, streaming) runs offline and in tests.
 *
 * It knows no tool by name: each bound tool says in its hint (offline-rules.ts) when to call it.
 *
 * - a message matching a tool's pattern -> calls those tools only
 * - "remember (that) X"                 -> calls the tools that remember, with X
 * - a question                          -> calls the tools that answer questions (those narrowed
 *                                          with `about` only when it matches), then answers from
 *                                          their results, quoting them
 * - anything else                       -> a plain reply
 *
 * A rule whose tool is not bound falls through to a plain reply.
 *
 * Like Bedrock it has a context window (`contextWindow`, default 8192 tokens) and reports
 * `usage_metadata`, both counted by the rule in token-estimate.ts (input: every message,
 * system included, plus the bound tools' definitions; output: the reply's text and tool
 * calls). An input over the window is rejected with the error Bedrock's Converse API
 * gives: a `ValidationException` (HTTP 400) "Input is too long for requested model."
 *
 * Structured output (withStructuredOutput binds one tool and expects a call to it) is answered by
 * the rule the output's owner registered under its name (offlineStructuredRule).
 */
export const OFFLINE_CONTEXT_WINDOW = 8192;

/**
 * Bedrock's error for an input over the window, in the SDK's shape (name, fault, HTTP status)
 * without importing the SDK: the offline path stays free of the Bedrock client.
 */
function inputTooLong(): Error {
  return Object.assign(new Error("Input is too long for requested model."), {
    name: "ValidationException",
    $fault: "client",
    $metadata: { httpStatusCode: 400 },
  });
}

export class OfflineChatModel extends BaseChatModel<OfflineCallOptions> {
  private readonly streamDelayMs: number;
  readonly contextWindow: number;

  constructor(fields: { streamDelayMs?: number; contextWindow?: number } = {}) {
    super({});
    this.streamDelayMs = fields.streamDelayMs ?? 0;
    this.contextWindow = fields.contextWindow ?? OFFLINE_CONTEXT_WINDOW;
  }

  static override lc_name() {
    return "OfflineChatModel";
  }

  _llmType(): string {
    return "offline-stand-in";
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<OfflineCallOptions>) {
    const converted = tools.map((t) => convertToOpenAITool(t));
    const hints = Object.fromEntries(
      tools.flatMap((t, i) => {
        const hint = hintOf(t);
        return hint ? [[converted[i]!.function.name, hint]] : [];
      }),
    );
    return this.withConfig({ tools: converted, hints, ...kwargs } as Partial<OfflineCallOptions>);
  }

  /**
   * Structured output through the same rules: bind one tool named after the schema and
   * return the arguments of the call the rules make to it. (The base implementation only
   * accepts message chunks from invoke.)
   */
  // biome-ignore lint/suspicious/noExplicitAny: overrides a generic LangChain signature whose return type depends on its call's type parameters
  override withStructuredOutput(_schema: unknown, config?: { name?: string; includeRaw?: boolean }): any {
    const name = config?.name ?? "extract";
    const bound = this.bindTools([
      { type: "function", function: { name, description: name, parameters: { type: "object" } } },
    ]);
    return RunnableLambda.from(async (input: BaseLanguageModelInput, options?: Partial<OfflineCallOptions>) => {
      const message = (await bound.invoke(input, options)) as AIMessage;
      const call = message.tool_calls?.find((c) => c.name === name);
      if (!call) throw new Error(`the offline model has no rule for structured output "${name}"`);
      // As LangChain's models answer it: with includeRaw, the message (its usage) beside the parsed output.
      return config?.includeRaw ? { raw: message, parsed: call.args } : call.args;
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
          usage_metadata: message.usage_metadata,
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
      // Usage rides on the first chunk; concatenating the chunks sums it once.
      const usage = i === 0 ? { usage_metadata: message.usage_metadata } : {};
      const chunk = new ChatGenerationChunk({
        text: word,
        message: new AIMessageChunk({ id, content: word, ...usage }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken(word, undefined, undefined, undefined, undefined, { chunk });
    }
  }

  private respond(messages: BaseMessage[], options: OfflineCallOptions): AIMessage {
    const input = messagesTokens(messages) + toolsTokens(options.tools ?? []);
    if (input > this.contextWindow) throw inputTooLong();
    const message = this.reply(messages, options);
    const output = textTokens(messageText(message));
    message.usage_metadata = { input_tokens: input, output_tokens: output, total_tokens: input + output };
    return message;
  }

  private reply(messages: BaseMessage[], options: OfflineCallOptions): AIMessage {
    const bound = (options.tools ?? []).map((t) => t.function.name);
    const hints = options.hints ?? {};
    const id = `offline-${randomUUID()}`;
    const last = messages[messages.length - 1];
    if (last instanceof ToolMessage || last?.getType() === "tool") {
      return new AIMessage({ id, content: answerFromTools(messages, hints) });
    }
    const pictures = last ? imagesOf(last) : [];
    if (pictures.length > 0) return new AIMessage({ id, content: describeImages(pictures) });
    const text = last ? messageText(last).trim() : "";
    for (const name of bound) {
      const rule = structuredRule(name);
      if (rule) return toolCalls(id, [[name, rule(text)]]);
    }
    const hinted = bound.flatMap((name) => (hints[name] ? [[name, hints[name]] as const] : []));
    const call = (name: string, hint: OfflineHint, input: string): [string, Record<string, unknown>] => [
      name,
      hint.args ? hint.args(input) : { query: input },
    ];
    const matching = hinted.filter(([, h]) => h.trigger instanceof RegExp && h.trigger.test(text));
    if (matching.length > 0)
      return toolCalls(
        id,
        matching.map(([name, hint]) => call(name, hint, text)),
      );
    const declined = hinted.find(([, h]) => h.declines?.trigger.test(text));
    if (declined) return new AIMessage({ id, content: declined[1].declines!.reply });
    const remembered = REMEMBER.exec(text);
    const rememberers = hinted.filter(([, h]) => h.trigger === "remember");
    if (remembered && rememberers.length > 0) {
      const fact = remembered[1]!.replace(/[.!]+$/, "");
      return toolCalls(
        id,
        rememberers.map(([name, hint]) => call(name, hint, fact)),
      );
    }
    if (isQuestion(text)) {
      const answerers = hinted.filter(([, h]) => h.trigger === "question" && (!h.about || h.about.test(text)));
      if (answerers.length > 0)
        return toolCalls(
          id,
          answerers.map(([name, hint]) => call(name, hint, text)),
        );
    }
    return new AIMessage({ id, content: plainReply(text) });
  }
}

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
function answerFromTools(messages: BaseMessage[], hints: Record<string, OfflineHint>): string {
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
      if (result.name && hints[result.name]?.confirms) return `I couldn't save that. ${plainProblem(problem)}`;
      problems.push(problem);
      continue;
    }
    if (result.name && hints[result.name]?.confirms) return `Got it. ${String(output.message ?? "Saved.")}`;
    const relays = result.name ? hints[result.name]?.relays : undefined;
    if (relays) {
      found.push(relays(output));
      continue;
    }
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

/** The Converse image blocks of a message: their format and bytes. */
function imagesOf(message: BaseMessage): { format: string; bytes: Uint8Array }[] {
  if (!Array.isArray(message.content)) return [];
  return (message.content as { type?: string; image?: { format: string; source: { bytes: Uint8Array } } }[]).flatMap(
    (b) => (b.type === "image" && b.image ? [{ format: b.image.format, bytes: b.image.source.bytes }] : []),
  );
}

/**
 * What the stand-in can honestly say of pictures: it cannot see them, but it can read their
 * format, dimensions and size from the bytes it was sent (as Bedrock would receive them).
 */
function describeImages(pictures: { format: string; bytes: Uint8Array }[]): string {
  const lines = pictures.map((p, i) => {
    let size = "";
    try {
      const info = imageSize(p.bytes);
      size = `, ${info.width}x${info.height} pixels`;
    } catch {
      size = ", dimensions unreadable";
    }
    return `image ${i + 1} is a ${p.format.toUpperCase()}${size}, ${p.bytes.byteLength} bytes`;
  });
  return `I am the offline stand-in for Bedrock, not a language model: I cannot see pictures. What I can read from the file${pictures.length > 1 ? "s" : ""}: ${lines.join("; ")}.`;
}
