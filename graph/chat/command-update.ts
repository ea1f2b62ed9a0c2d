import type { BaseMessage } from "@langchain/core/messages";
import { messagesStateReducer } from "@langchain/langgraph";
import { AppError } from "../../shared/errors";
import type { RunCommand } from "./service";

/** The writes a command's update makes to the messages key, in order, in either form LangGraph takes. */
export function messageWrites(update: RunCommand["update"]): unknown[] {
  if (update === undefined) return [];
  if (Array.isArray(update)) return update.filter(([key]) => key === "messages").map(([, value]) => value);
  return update.messages === undefined ? [] : [update.messages];
}

/**
 * Applies a command's message writes to the messages they would join, as the messages reducer will
 * when the run starts, and answers 400 invalid_update for what it refuses (a removal of a message the
 * state does not hold). Checked before the run because LangGraph stores a command's writes with the
 * checkpoint before it applies them: one it then refuses would fail every later read of the thread.
 */
export function checkMessageWrites(messages: BaseMessage[], writes: unknown[]): void {
  let current = messages;
  try {
    for (const write of writes) current = messagesStateReducer(current, write as never);
  } catch (err) {
    throw new AppError(400, "invalid_update", `command.update: ${(err as Error).message.slice(0, 300)}`);
  }
}
