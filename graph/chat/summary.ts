import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import * as z from "../../shared/zod";
import { offlineStructuredRule } from "../../shared/models/offline-rules";
import { transcript } from "./context-window";

/** The structured-output tool's name; the offline stand-in answers it by rule. */
export const SUMMARY_TOOL = "conversation_summary";
/** What the summariser is asked to stay under; a longer answer is cut at twice this. */
export const SUMMARY_MAX_WORDS = 250;

/**
 * The offline stand-in's rule: the previous summary's lines, then one line per user message
 * leaving the window, quoted. It cannot condense, so it stays bounded by keeping the first
 * lines (how the conversation began) and the latest ones.
 */
const OFFLINE_HEAD_LINES = 4;
const OFFLINE_TAIL_LINES = 8;
offlineStructuredRule(SUMMARY_TOOL, (prompt) => {
  const previous = /<previous_summary>([\s\S]*?)<\/previous_summary>/.exec(prompt)?.[1] ?? "";
  const conversation = /<conversation>([\s\S]*?)<\/conversation>/.exec(prompt)?.[1] ?? "";
  const lines = previous.split("\n").filter((l) => l.startsWith("- "));
  for (const said of conversation.matchAll(/^user: (.*)$/gm)) {
    const text = said[1]!.trim();
    lines.push(`- The user said: "${text.length > 120 ? `${text.slice(0, 120)}…` : text}"`);
  }
  const kept =
    lines.length > OFFLINE_HEAD_LINES + OFFLINE_TAIL_LINES
      ? [...lines.slice(0, OFFLINE_HEAD_LINES), ...lines.slice(-OFFLINE_TAIL_LINES)]
      : lines;
  return { summary: kept.join("\n") };
});

const Summary = z.object({ summary: z.string().check(z.describe("The updated summary.")) });

/**
 * Folds the messages leaving the window into the running summary with one light model
 * call. The summary is updated incrementally (previous summary + what just left), so each
 * call costs about one window's worth of dropped turns, not the conversation.
 */
export async function updateSummary(model: BaseChatModel, previous: string, leaving: BaseMessage[]): Promise<string> {
  const { summary } = Summary.parse(
    await model
      .withStructuredOutput(Summary, { name: SUMMARY_TOOL })
      .invoke([
        new SystemMessage(
          [
            "You keep a running summary of a conversation between a user and an assistant.",
            "Fold the messages below, which are leaving the assistant's view, into the previous summary.",
            "Keep what the user said about themselves, their requests and decisions, names, numbers and open questions;",
            `drop pleasantries and anything the assistant can look up again. At most ${SUMMARY_MAX_WORDS} words.`,
          ].join(" "),
        ),
        new HumanMessage(
          `<previous_summary>\n${previous}\n</previous_summary>\n<conversation>\n${transcript(leaving)}\n</conversation>`,
        ),
      ]),
  );
  const words = summary.trim().split(/\s+/);
  return words.length > 2 * SUMMARY_MAX_WORDS ? `${words.slice(0, 2 * SUMMARY_MAX_WORDS).join(" ")} …` : summary.trim();
}
