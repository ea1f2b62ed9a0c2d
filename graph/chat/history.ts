import { AIMessage, type BaseMessage, HumanMessage, type MessageContent, ToolMessage } from "@langchain/core/messages";

/** What a tool call that never finished is answered with. */
export const INTERRUPTED_TOOL_RESULT = JSON.stringify({
  success: false,
  error: "interrupted: this tool call did not finish, and its result is unknown",
});
/** What closes a user message that never got a reply before the next one. */
export const INTERRUPTED_REPLY = "(No reply: the previous turn was interrupted before it finished.)";
/** What an assistant message with nothing in it says. */
const EMPTY_REPLY = "(No reply.)";
/** What opens a history that starts with the assistant (trimmed from the front). */
const EARLIER = "(The conversation continues from earlier messages.)";

type Role = "user" | "assistant";
const roleOf = (m: BaseMessage): Role | undefined =>
  m.getType() === "ai" ? "assistant" : m.getType() === "human" || m.getType() === "tool" ? "user" : undefined;

const blocks = (content: MessageContent) =>
  typeof content === "string" ? (content === "" ? [] : [{ type: "text" as const, text: content }]) : content;
const hasText = (content: MessageContent) =>
  blocks(content).some(
    (b) => typeof b === "string" || (b.type === "text" && String((b as { text?: string }).text ?? "").trim() !== ""),
  );

/** Two assistant messages in a row as one: the text of both, the tool calls of the second. */
function mergeAssistant(first: AIMessage, second: AIMessage): AIMessage {
  const content =
    typeof first.content === "string" && typeof second.content === "string"
      ? [first.content, second.content].filter((t) => t !== "").join("\n\n")
      : [...blocks(first.content), ...blocks(second.content)];
  return new AIMessage({ id: second.id, content, tool_calls: second.tool_calls ?? [] });
}

/**
 * The history as a valid Bedrock Converse conversation, for the model call only (the graph state
 * is not changed). A crash mid-turn (kill -9, a lost Lambda) can leave a human message with no
 * reply, or a tool call with no result; so can a failed turn whose undo could not be written.
 * Converse rejects both: roles must alternate starting with the user, and every toolUse must be
 * answered by a toolResult in the next message. So:
 *
 * - a tool call without a result gets one saying it was interrupted;
 * - a tool result that does not answer a call just before it is dropped;
 * - a user message right after another user message (or after tool results) is preceded by an
 *   assistant message saying the previous turn was interrupted: closed rather than merged, so the
 *   model does not take an old question as part of the new one;
 * - two assistant messages in a row are merged, and an empty one gets a placeholder;
 * - a history that starts with the assistant gets a user note first.
 *
 * System messages pass through: the Converse builder takes them out of the sequence. A valid
 * history comes back unchanged (the same message objects, in the same order).
 */
export function repairHistory(messages: BaseMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  let last: Role | undefined;
  const push = (m: BaseMessage) => {
    if (last === undefined && roleOf(m) === "assistant") out.push(new HumanMessage(EARLIER));
    out.push(m);
    last = roleOf(m) ?? last;
  };
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const type = message.getType();
    if (type === "tool") continue; // emitted right after its call below; otherwise an orphan
    if (type === "human") {
      if (last === "user") push(new AIMessage(INTERRUPTED_REPLY));
      push(message);
      continue;
    }
    if (type !== "ai") {
      out.push(message);
      continue;
    }
    let ai = message as AIMessage;
    if (last === "assistant") ai = mergeAssistant(out.pop() as AIMessage, ai);
    const calls = ai.tool_calls ?? [];
    if (calls.length === 0 && !hasText(ai.content)) ai = new AIMessage({ id: ai.id, content: EMPTY_REPLY });
    push(ai);
    if (calls.length === 0) continue;
    const results = new Map<string, ToolMessage>();
    for (let j = i + 1; j < messages.length && messages[j]!.getType() === "tool"; j++) {
      const result = messages[j] as ToolMessage;
      if (!results.has(result.tool_call_id)) results.set(result.tool_call_id, result);
    }
    for (const call of calls) {
      push(
        results.get(call.id ?? "") ??
          new ToolMessage({
            tool_call_id: call.id ?? "",
            name: call.name,
            status: "error",
            content: INTERRUPTED_TOOL_RESULT,
          }),
      );
    }
  }
  return out;
}
