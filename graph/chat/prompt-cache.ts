import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";

/**
 * Bedrock Converse prompt caching: which models take cache points, and where ours go.
 *
 * From Bedrock's prompt-caching documentation: Claude 3.7 Sonnet and later Claude models
 * (Sonnet 4.x, Opus 4.x, Haiku 4.5) and Claude 3.5 Haiku cache the system, messages and
 * tools fields; Amazon Nova (Micro, Lite, Pro, Premier) caches system and messages, not
 * tools. A checkpoint only takes effect once the prefix before it reaches the model's
 * minimum (1,024 tokens for Claude 3.7 Sonnet and the 4.x Sonnet/Opus, 2,048 for Claude
 * 3.5 Haiku, 4,096 for Claude Haiku 4.5, 1,000 for Nova); at most 4 per request.
 *
 * Our points: after the tools (by @langchain/aws's `cache_control` option, which skips
 * tools for Nova and also marks the end of the request, so a tool loop's second call
 * reuses its first), after the system prompt (before the running summary, which changes
 * more often), and at the end of the stable history: the last message before the current
 * turn. That is 4 for Claude, 3 for Nova.
 */
export interface CachePolicy {
  /** tokens the prefix must reach before a checkpoint takes effect */
  minTokens: number;
  /** whether toolConfig.tools takes a cache point */
  tools: boolean;
}

const MODELS: [RegExp, CachePolicy][] = [
  [/^anthropic\.claude-3-7-sonnet/, { minTokens: 1024, tools: true }],
  [/^anthropic\.claude-3-5-haiku/, { minTokens: 2048, tools: true }],
  [/^anthropic\.claude-haiku-4/, { minTokens: 4096, tools: true }],
  [/^anthropic\.claude-(sonnet|opus)-4/, { minTokens: 1024, tools: true }],
  [/^amazon\.nova-(micro|lite|pro|premier)/, { minTokens: 1000, tools: false }],
];

/** The policy for a Bedrock model id, inference profile id (us./eu./apac./global.) or profile ARN. */
export function promptCachePolicy(modelId: string | undefined): CachePolicy | undefined {
  if (!modelId) return undefined;
  const id = modelId.slice(modelId.lastIndexOf("/") + 1).replace(/^(us|eu|apac|jp|au|ca|us-gov|global)\./, "");
  return MODELS.find(([pattern]) => pattern.test(id))?.[1];
}

/** A Converse cache point as @langchain/aws takes it in message content. */
export const CACHE_POINT = { cachePoint: { type: "default" } } as const;

/**
 * A copy of `message` with a cache point after its content. Only plain human and AI
 * replies are marked: a tool-calling AI message or a tool result is left as it is.
 */
export function withCachePoint(message: BaseMessage): BaseMessage {
  const type = message.getType();
  const content = message.content;
  const blocks = [
    ...(typeof content === "string" ? (content ? [{ type: "text" as const, text: content }] : []) : content),
    CACHE_POINT,
  ] as unknown as BaseMessage["content"];
  if (type === "human") return new HumanMessage({ id: message.id, content: blocks as HumanMessage["content"] });
  const ai = message as AIMessage;
  if (type === "ai" && (ai.tool_calls?.length ?? 0) === 0 && content !== "") {
    return new AIMessage({ id: ai.id, content: blocks as AIMessage["content"] });
  }
  return message;
}
