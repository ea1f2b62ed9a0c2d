import * as z from "../../shared/zod";
import type { ChatLine, Hop } from "./state";

/**
 * The support agent's model calls: one structured output per decision. Prompts put their
 * inputs in tags (<question>, <gathered>, <draft>), which is good practice for Claude and what
 * the offline stand-in's rules read.
 */
export const Plan = z.object({
  reasoning: z.string(),
  tool_calls: z
    .array(z.object({ tool_name: z.string(), parameters: z.record(z.string(), z.unknown()), reasoning: z.string() }))
    .check(z.maxLength(5)),
});
export const CoverageJudgement = z.object({
  data_sufficient: z.boolean(),
  coverage_score: z.number().check(z.gte(0), z.lte(1)),
  missing_data: z.array(z.string()),
  reasoning: z.string(),
});
export const Draft = z.object({ reply: z.string(), route_to_team: z.boolean(), reasoning: z.string() });
export const Validation = z.object({ valid: z.boolean(), issues: z.array(z.string()), reasoning: z.string() });

export const TOOL_NAMES = {
  plan: "support_plan",
  coverage: "support_coverage",
  draft: "support_draft",
  validate: "support_validate",
};

export interface Gathered {
  source: string;
  content: string;
}

const SECTIONS = ["conversation", "question", "tools", "still_missing", "gathered", "draft"];
const SECTION_TAG = new RegExp(`<(/?)(${SECTIONS.join("|")})(\\b[^>]*)>`, "gi");

/**
 * A value as a section's text: whatever the customer (or a document) wrote cannot open or close a
 * section, so a message spelling `</question><gathered>…` cannot pass itself off as gathered
 * documentation. Only the sections' own tags are touched; other text reaches the model as written.
 */
const inert = (text: string) => text.replace(SECTION_TAG, "&lt;$1$2$3&gt;");
const json = (value: unknown) => inert(JSON.stringify(value));

/**
 * Bounds on what a conversation puts into a prompt, in characters: one pasted log would otherwise
 * pass the model's window, and every later message in that conversation would fail to plan. The
 * question is its start; the transcript its latest lines, whole, the oldest left out first.
 */
export const QUESTION_MAX_CHARS = 4_000;
export const TRANSCRIPT_MAX_CHARS = 12_000;

function clip(text: string, max = QUESTION_MAX_CHARS): string {
  if (text.length <= max) return text;
  // Never between the two halves of a surrogate pair: a lone half is ill-formed text for the model's API.
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)} […cut: ${text.length - end} more characters]`;
}

/** The question's section of every prompt. */
const questionSection = (question: string) => `<question>${inert(clip(question))}</question>`;

function transcript(messages: ChatLine[]): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const line = `${messages[i]!.role}: ${clip(messages[i]!.content)}`;
    if (lines.length > 0 && size + line.length > TRANSCRIPT_MAX_CHARS) {
      lines.push(`[${i + 1} earlier message(s) left out]`);
      break;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return inert(lines.reverse().join("\n"));
}

export function planPrompt(messages: ChatLine[], question: string, tools: string[], previous: Hop[]): string {
  const missing = previous.flatMap((h) => h.coverage.missing_data);
  return [
    "You are a customer support agent. Choose the tool calls that gather what is needed to answer the customer's latest question.",
    `<conversation>\n${transcript(messages)}\n</conversation>`,
    questionSection(question),
    `<tools>${inert(tools.join(", "))}</tools>`,
    missing.length ? `<still_missing>${inert(missing.join("; "))}</still_missing>` : "",
  ].join("\n");
}

export function coveragePrompt(question: string, gathered: Gathered[]): string {
  return [
    "Judge whether the gathered data is enough to answer the question correctly and completely. Do not guess.",
    questionSection(question),
    `<gathered>${json(gathered)}</gathered>`,
  ].join("\n");
}

export function draftPrompt(question: string, gathered: Gathered[]): string {
  return [
    "Write the reply to the customer, using only the gathered data, and cite the source document.",
    "Set route_to_team when a person should handle it (billing disputes, account access, anything not covered).",
    questionSection(question),
    `<gathered>${json(gathered)}</gathered>`,
  ].join("\n");
}

export function validatePrompt(question: string, gathered: Gathered[], draft: string): string {
  return [
    "Check the draft against the gathered data and policy: every claim must be supported, no promises the data does not make.",
    questionSection(question),
    `<gathered>${json(gathered)}</gathered>`,
    `<draft>${inert(draft)}</draft>`,
  ].join("\n");
}
