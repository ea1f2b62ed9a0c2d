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

const transcript = (messages: ChatLine[]) => inert(messages.map((m) => `${m.role}: ${m.content}`).join("\n"));

export function planPrompt(messages: ChatLine[], question: string, tools: string[], previous: Hop[]): string {
  const missing = previous.flatMap((h) => h.coverage.missing_data);
  return [
    "You are a customer support agent. Choose the tool calls that gather what is needed to answer the customer's latest question.",
    `<conversation>\n${transcript(messages)}\n</conversation>`,
    `<question>${inert(question)}</question>`,
    `<tools>${inert(tools.join(", "))}</tools>`,
    missing.length ? `<still_missing>${inert(missing.join("; "))}</still_missing>` : "",
  ].join("\n");
}

export function coveragePrompt(question: string, gathered: Gathered[]): string {
  return [
    "Judge whether the gathered data is enough to answer the question correctly and completely. Do not guess.",
    `<question>${inert(question)}</question>`,
    `<gathered>${json(gathered)}</gathered>`,
  ].join("\n");
}

export function draftPrompt(question: string, gathered: Gathered[]): string {
  return [
    "Write the reply to the customer, using only the gathered data, and cite the source document.",
    "Set route_to_team when a person should handle it (billing disputes, account access, anything not covered).",
    `<question>${inert(question)}</question>`,
    `<gathered>${json(gathered)}</gathered>`,
  ].join("\n");
}

export function validatePrompt(question: string, gathered: Gathered[], draft: string): string {
  return [
    "Check the draft against the gathered data and policy: every claim must be supported, no promises the data does not make.",
    `<question>${inert(question)}</question>`,
    `<gathered>${json(gathered)}</gathered>`,
    `<draft>${inert(draft)}</draft>`,
  ].join("\n");
}
