import type { BaseMessage } from "@langchain/core/messages";

/**
 * The project's one token-counting rule, stated so it can be checked: a text costs one
 * token per 4 UTF-8 bytes (rounded up), a message adds 4 tokens of role framing, and a
 * tool call or a tool definition costs its JSON's text. Real tokenizers average about
 * 3.5–4.5 bytes per token on English prose; the agent corrects for the model it talks to
 * with the ratio between a call's reported input tokens and this estimate (see
 * graph/chat/context-window.ts). The offline stand-in counts by exactly this rule, so
 * locally the ratio is 1.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export function textTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** Text that estimates (4 bytes a token) as many tokens as a large image costs: 1,600. */
const IMAGE_ALLOWANCE = "x".repeat(1600 * 4);

/** The text a message carries for counting: string content, text blocks, other blocks as JSON, tool calls. */
export function messageText(message: BaseMessage): string {
  const parts: string[] = [];
  const content = message.content;
  if (typeof content === "string") parts.push(content);
  else
    for (const block of content as unknown as Record<string, unknown>[]) {
      if ("cachePoint" in block) continue;
      // An image is counted by the model per its pixels, not its bytes: a flat allowance here
      // (Claude's largest image is about 1,600 tokens), never its base64 or byte array.
      if (block.type === "image" || block.type === "image_ref") {
        parts.push(IMAGE_ALLOWANCE);
        continue;
      }
      parts.push(block.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block));
    }
  const calls = (message as { tool_calls?: { name: string; args: unknown }[] }).tool_calls ?? [];
  for (const call of calls) parts.push(JSON.stringify({ name: call.name, args: call.args }));
  return parts.join("\n");
}

export function messageTokens(message: BaseMessage): number {
  return MESSAGE_OVERHEAD_TOKENS + textTokens(messageText(message));
}

export function messagesTokens(messages: readonly BaseMessage[]): number {
  return messages.reduce((n, m) => n + messageTokens(m), 0);
}

/** Tool definitions as the model receives them (name, description, JSON schema). */
export function toolsTokens(tools: readonly unknown[]): number {
  return tools.reduce<number>((n, t) => n + textTokens(JSON.stringify(t)), 0);
}
