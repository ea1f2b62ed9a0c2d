import type { Message } from "@langchain/langgraph-sdk";

/** A message's text: a string, or the text parts of a list of content blocks. */
export function textOf(message: Message): string {
  const content = message.content as unknown;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : part?.type === "text" ? String(part.text ?? "") : ""))
    .join("");
}

/**
 * Which assistant messages end a turn (the reply the transcript keeps, and whose trace exists):
 * the last AI message with text before the next human message, or before the end once the run is
 * done. For each, how many turns come after it: counted from the end, the position still holds
 * when a long session's oldest turns were compacted out of the graph state but not the transcript.
 */
export function replyPositions(messages: Message[], running: boolean): Map<number, number> {
  const ends: number[] = [];
  let lastReply: number | undefined;
  messages.forEach((m, i) => {
    if (m.type === "human") {
      if (lastReply !== undefined) ends.push(lastReply);
      lastReply = undefined;
    } else if (m.type === "ai" && textOf(m).trim()) lastReply = i;
  });
  if (lastReply !== undefined && !running) ends.push(lastReply);
  return new Map(ends.map((index, n) => [index, ends.length - 1 - n]));
}

/** A tool call of an AI message with the tool message that answered it, once it has. */
export interface PairedToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** the tool's answer; undefined while it runs */
  result?: string;
  state: "pending" | "completed" | "error";
}

/**
 * The calls an AI message made, each paired with its result by tool_call_id. (The SDK's
 * useStream pairs them at run time too, but its BaseStream type does not declare getToolCalls.)
 */
export function toolCallsOf(message: Message, messages: Message[]): PairedToolCall[] {
  if (message.type !== "ai") return [];
  return (message.tool_calls ?? []).map((call, index) => {
    const id = call.id ?? `${message.id}-${index}`;
    const answer = messages.find((m) => m.type === "tool" && m.tool_call_id === id);
    const status = answer?.type === "tool" ? answer.status : undefined;
    return {
      id,
      name: call.name,
      args: call.args,
      result: answer ? textOf(answer) : undefined,
      state: !answer ? "pending" : status === "error" ? "error" : "completed",
    };
  });
}

/** What a thread's list entry shows when it was never renamed: its first message, clipped. */
export function threadTitle(thread: { metadata: unknown; values: unknown }): string {
  const name = (thread.metadata as Record<string, unknown> | null)?.name;
  if (typeof name === "string" && name.trim()) return name;
  const first = messagesOf(thread.values).find((m) => m.type === "human");
  const text = first ? textOf(first).replace(/\s+/g, " ").trim() : "";
  if (!text) return "New chat";
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
}

/**
 * How many messages a person sees in a thread (theirs and the agent's answers), or undefined when
 * the list does not carry its values (a thread too large for its list entry).
 */
export function visibleMessageCount(values: unknown): number | undefined {
  if (values === null || typeof values !== "object") return undefined;
  return messagesOf(values).filter((m) => m.type === "human" || (m.type === "ai" && textOf(m).trim())).length;
}

const messagesOf = (values: unknown): Message[] => {
  const messages = (values as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? (messages as Message[]) : [];
};
