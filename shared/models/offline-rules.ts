/**
 * What the offline stand-in model needs to know to act like a model, declared by the code that
 * owns each tool or structured output, not by the stand-in: the stand-in (offline-chat-model.ts)
 * knows no tool or schema by name. A tool carries its hint in its LangChain metadata; a structured
 * output registers its rule here under the name it is called with.
 */

/** When the stand-in calls a bound tool, and with which arguments. */
export interface OfflineHint {
  /**
   * "remember": the message asks to remember something ("remember that X"); "question": the
   * message is a question; a pattern: the message matches it. A pattern is specific: when any
   * bound tool's pattern matches, only those tools are called.
   */
  trigger: "remember" | "question" | RegExp;
  /** only questions that also match this (e.g. about the user's account) */
  about?: RegExp;
  /** the call's arguments from the message (for "remember": what to remember); default `{ query: text }` */
  args?: (text: string) => Record<string, unknown>;
  /** its result is a confirmation to relay ("Got it. …"), not material to quote */
  confirms?: boolean;
  /** how its result is told to the user, as text (e.g. a query's rows); default: quoted as found */
  relays?: (output: Record<string, unknown>) => string;
  /**
   * A message this tool is about but cannot serve by rule (a plain-language question about a data
   * file, which only a model could turn into SQL): the stand-in answers `reply` instead of a call.
   */
  declines?: { trigger: RegExp; reply: string };
}

/** The metadata key a LangChain tool carries its hint under. */
export const OFFLINE_HINT = "offlineHint";

export function hintOf(tool: unknown): OfflineHint | undefined {
  const metadata = (tool as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  return metadata?.[OFFLINE_HINT] as OfflineHint | undefined;
}

/** A structured output's answer by rule, from the text of the prompt's last message. */
export type StructuredRule = (prompt: string) => Record<string, unknown>;

const structuredRules = new Map<string, StructuredRule>();

/** Registers how the stand-in answers the structured output called `name`. */
export function offlineStructuredRule(name: string, rule: StructuredRule): void {
  structuredRules.set(name, rule);
}

export function structuredRule(name: string): StructuredRule | undefined {
  return structuredRules.get(name);
}
