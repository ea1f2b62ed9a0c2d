import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import * as z from "../../shared/zod";
import { factsIn } from "../../shared/facts";
import { offlineStructuredRule } from "../../shared/models/offline-rules";
import type { ExtractionMessage } from "./message";

export const MAX_FACTS = 5;

export const Facts = z.object({
  facts: z
    .array(
      z.object({
        content: z
          .string()
          .check(
            z.trim(),
            z.minLength(3),
            z.maxLength(500),
            z.describe("One atomic fact, self-contained, in the user's own terms."),
          ),
        category: z.enum(["preference", "personal", "work", "decision", "constraint"]),
        subject: z
          .string()
          .check(
            z.trim(),
            z.minLength(1),
            z.maxLength(80),
            z.describe(
              "A short lower-case key for what the fact is about, e.g. 'favourite colour', 'employer', 'seat preference'.",
            ),
          ),
      }),
    )
    .check(z.maxLength(MAX_FACTS)),
});

export type ExtractedFact = z.infer<typeof Facts>["facts"][number];

/** The structured-output tool's name; the offline stand-in answers it by rules. */
export const FACTS_TOOL = "memory_facts";

// The offline stand-in reads facts out of the user's message with English rules (shared/facts.ts).
// Only the stand-in uses them: reconciliation decides by similarity and the subjects given here.
offlineStructuredRule(FACTS_TOOL, (prompt) => ({
  facts: factsIn(/<user_message>([\s\S]*?)<\/user_message>/.exec(prompt)?.[1] ?? ""),
}));

const INSTRUCTIONS = `You extract durable facts about the user from one turn of a conversation, for a long-term memory.
Return 0 to ${MAX_FACTS} facts. Keep only what is worth remembering in later conversations: preferences, decisions,
constraints, and facts about the user, their work and their life. Each fact is atomic and makes sense on its own.
Do not keep small talk, questions, requests, or anything the assistant said. When the user corrects or updates
something ("my favourite colour is now green"), state the new fact and give it the same subject as the old one.
The user's message is inside <user_message> tags; the assistant's reply inside <assistant_reply> tags is context only.`;

/**
 * Asks the model for the turn's facts, with structured output; the answer is validated, not
 * trusted. Also says how many model tokens the call took (the user's quota counts them), before
 * the answer is checked: an answer that does not parse was spent all the same.
 */
export async function extractFacts(
  model: BaseChatModel,
  turn: ExtractionMessage,
  onTokens: (tokens: number) => void = () => undefined,
): Promise<{ facts: ExtractedFact[]; tokens: number }> {
  const structured = model.withStructuredOutput(Facts, { name: FACTS_TOOL, includeRaw: true });
  const { raw, parsed } = await structured.invoke([
    new SystemMessage(INSTRUCTIONS),
    new HumanMessage(
      `<user_message>\n${turn.user_message}\n</user_message>\n<assistant_reply>\n${turn.assistant_reply}\n</assistant_reply>`,
    ),
  ]);
  const tokens = (raw as AIMessage).usage_metadata?.total_tokens ?? 0;
  onTokens(tokens);
  return { facts: Facts.parse(parsed).facts, tokens };
}
