import { isAIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { messagesTokens, messageText, textTokens } from "../../shared/models/token-estimate";
import { truncateUtf8 } from "../../shared/text";

/**
 * Fitting a conversation to a token budget, as pure functions over messages.
 *
 * The unit is the turn: a human message and everything up to the next one (the model's
 * tool calls, their results, the reply). Turns are kept or dropped whole, newest first,
 * so a tool call is never separated from its results and the window always starts with a
 * user message, as Converse requires. The current (last) turn is always kept.
 *
 * Tool results of earlier turns (knowledge-base excerpts of 1–2k tokens each) are the
 * bulk of a long session and are rarely needed again: above STUB_MIN_TOKENS they are
 * replaced, in the model's input only, by a stub naming the tool and what it returned.
 * The stored messages and the trace keep the full text. Stubs are deterministic, so the
 * input prefix stays byte-identical from call to call (prompt caching depends on that).
 */
export const STUB_MIN_TOKENS = 200;
const STUB_PREVIEW_CHARS = 160;

/** Splits messages into turns; messages before the first human message form a turn of their own. */
export function turns(messages: readonly BaseMessage[]): BaseMessage[][] {
  const out: BaseMessage[][] = [];
  for (const m of messages) {
    if (m.getType() === "human" || out.length === 0) out.push([m]);
    else out[out.length - 1]!.push(m);
  }
  return out;
}

export function stubToolResult(message: BaseMessage): BaseMessage {
  if (!(message instanceof ToolMessage) && message.getType() !== "tool") return message;
  const tool = message as ToolMessage;
  const text = messageText(tool);
  const tokens = textTokens(text);
  if (tokens <= STUB_MIN_TOKENS) return message;
  const preview = text.replace(/\s+/g, " ").slice(0, STUB_PREVIEW_CHARS);
  return new ToolMessage({
    id: tool.id,
    tool_call_id: tool.tool_call_id,
    name: tool.name,
    status: tool.status,
    content: `[earlier result of ${tool.name ?? "a tool"}, ${tokens} tokens, elided from the context; it began: ${preview}…]`,
  });
}

/** About what the note on a cut result takes, in tokens. */
const CUT_NOTE_TOKENS = 60;

/** The most of the budget the current turn's tool results may take in the model's input, together. */
export const CURRENT_RESULT_SHARE = 0.5;

/**
 * A current turn's tool result cut to `maxTokens`, in the model's input only, with a note saying
 * so: sent whole, a result over the context (a wide query's rows, a long page from an MCP tool)
 * made the model refuse the whole input and the turn fail. The model reads what fit and can ask
 * for less. Deterministic, like the stubs.
 */
export function cutToolResult(message: BaseMessage, maxTokens: number): BaseMessage {
  if (!(message instanceof ToolMessage) && message.getType() !== "tool") return message;
  const tool = message as ToolMessage;
  const text = messageText(tool);
  const tokens = textTokens(text);
  // A result no larger than the note would be is kept whole: a short error says why a call failed.
  if (tokens <= Math.max(maxTokens, CUT_NOTE_TOKENS)) return message;
  const share = Math.max(0, maxTokens);
  // In UTF-8 bytes, as the estimate counts them (4 a token), with room for the note; with no room
  // left, the note alone.
  const kept = truncateUtf8(text, Math.max(0, share - CUT_NOTE_TOKENS) * 4);
  return new ToolMessage({
    id: tool.id,
    tool_call_id: tool.tool_call_id,
    name: tool.name,
    status: tool.status,
    content: `${kept}\n[cut here: the whole result is ${tokens} tokens, more than the ${share} this turn can show; ask for less of it (fewer columns or rows, a LIMIT, a narrower question)]`,
  });
}

/**
 * The current turn's tool results within `total` tokens together and within the `room` the turn's
 * other messages before each leave: each, in the order they came, is cut to what the messages
 * before it left (a result past that keeps only the note). A result's cut then depends only on
 * what came before it, never on what follows or on the calibration: it reads the same on every
 * call of the turn (the model keeps what it read; the request's prefix stays cacheable).
 */
function cutResults(turn: BaseMessage[], total: number, room: number): BaseMessage[] {
  if (!Number.isFinite(total) && !Number.isFinite(room)) return turn;
  let results = 0;
  let before = 0;
  return turn.map((m) => {
    const shown = m.getType() === "tool" ? cutToolResult(m, Math.min(total - results, room - before)) : m;
    const cost = messagesTokens([shown]);
    if (m.getType() === "tool") results += cost;
    before += cost;
    return shown;
  });
}

export interface Fitted {
  /** what the model is sent: kept turns, older tool results stubbed */
  window: BaseMessage[];
  /** the original messages of the turns that did not fit, oldest first */
  dropped: BaseMessage[];
  /** estimated tokens of `window` (before any calibration) */
  tokens: number;
}

/**
 * The newest whole turns whose estimated tokens, scaled by `ratio`, fit `budget`. The last
 * turn is kept even when it alone is over, its tool results cut to `resultTokens` between them
 * and to the `room` its other messages leave (cutResults); what is still over (a long message
 * alone) is the model's call.
 */
export function fitTurns(
  messages: readonly BaseMessage[],
  budget: number,
  ratio = 1,
  /** what the current turn's tool results may take together (default: the share of `budget`) */
  resultTokens = Math.floor(budget * CURRENT_RESULT_SHARE),
  /** what the current turn may take in all, uncalibrated (default: `budget`) */
  room = budget,
): Fitted {
  const all = turns(messages);
  const shown = all.map((turn, i) =>
    i === all.length - 1 ? cutResults(turn, resultTokens, room) : turn.map(stubToolResult),
  );
  let first = all.length;
  let tokens = 0;
  while (first > 0) {
    const cost = messagesTokens(shown[first - 1]!);
    if (first < all.length && (tokens + cost) * ratio > budget) break;
    tokens += cost;
    first -= 1;
  }
  return { window: shown.slice(first).flat(), dropped: all.slice(0, first).flat(), tokens };
}

/** Index in `window` of the last message of the turn before the current one, or -1. */
export function stablePrefixEnd(window: readonly BaseMessage[]): number {
  for (let i = window.length - 1; i > 0; i--) if (window[i]!.getType() === "human") return i - 1;
  return -1;
}

/** A transcript of messages for the summariser: who said what, tool results shortened. */
export function transcript(messages: readonly BaseMessage[]): string {
  return messages
    .map((m) => {
      const shown = stubToolResult(m);
      const type = m.getType();
      if (type === "human") return `user: ${messageText(shown).replace(/\s+/g, " ")}`;
      if (type === "tool") return `tool ${(m as ToolMessage).name ?? ""}: ${messageText(shown).replace(/\s+/g, " ")}`;
      if (isAIMessage(m) && (m.tool_calls?.length ?? 0) > 0 && messageText(m).trim() === "") {
        return `assistant called: ${m.tool_calls!.map((c) => c.name).join(", ")}`;
      }
      return `assistant: ${messageText(shown).replace(/\s+/g, " ")}`;
    })
    .join("\n");
}
