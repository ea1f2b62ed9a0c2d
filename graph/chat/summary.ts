import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import * as z from "zod";
import { transcript } from "./context-window";

/** The structured-output tool's name; the offline stand-in answers it by rule. */
export const SUMMARY_TOOL = "conversation_summary";
/** What the summariser is asked to stay under; a longer answer is cut at twice this. */
export const SUMMARY_MAX_WORDS = 250;

const Summary = z.object({ summary: z.string().describe("The updated summary.") });

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
