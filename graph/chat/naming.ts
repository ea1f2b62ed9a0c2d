import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import * as z from "../../shared/zod";
import { offlineStructuredRule } from "../../shared/models/offline-rules";

export const MAX_NAME_WORDS = 5;
/** The structured-output tool's name; the offline stand-in answers it by rule. */
export const SESSION_NAME_TOOL = "session_name";

// The offline stand-in names a session by the same rule as the fallback.
offlineStructuredRule(SESSION_NAME_TOOL, (prompt) => ({ name: firstWords(prompt) }));

const SessionName = z.object({
  name: z.string().check(z.describe(`A title for the chat, at most ${MAX_NAME_WORDS} words.`)),
});

/** The fallback, and the offline stand-in's rule: the message's first five words. */
export function firstWords(message: string, words = MAX_NAME_WORDS): string {
  return (
    message
      .trim()
      .split(/\s+/)
      .slice(0, words)
      .join(" ")
      .replace(/[.,;:!?]+$/, "") || "New chat"
  );
}

/**
 * Names a session from its first message with a light model call, bounded in time. Any
 * failure (error, timeout, empty or overlong answer) falls back to the first five words.
 */
export async function nameSession(
  model: BaseChatModel,
  message: string,
  {
    timeoutMs = 4000,
    signal,
    onTokens,
  }: {
    timeoutMs?: number;
    signal?: AbortSignal;
    /** told the call's model tokens once it answers (the user's quota counts them) */
    onTokens?: (tokens: number) => void;
  } = {},
): Promise<string> {
  try {
    const call = model
      .withStructuredOutput(SessionName, { name: SESSION_NAME_TOOL, includeRaw: true })
      .invoke(
        [
          new SystemMessage(`Give this chat a short title of at most ${MAX_NAME_WORDS} words. No quotes.`),
          new HumanMessage(message.slice(0, 2000)),
        ],
        { signal },
      );
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("naming timed out")), timeoutMs).unref(),
    );
    const { raw, parsed } = await Promise.race([call, timeout]);
    onTokens?.((raw as AIMessage).usage_metadata?.total_tokens ?? 0);
    const { name } = SessionName.parse(parsed);
    const words = name.replace(/["'`]/g, "").trim().split(/\s+/).filter(Boolean);
    if (words.length === 0 || words.length > MAX_NAME_WORDS) throw new Error("unusable name");
    return words.join(" ");
  } catch {
    return firstWords(message);
  }
}
