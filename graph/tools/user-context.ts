import * as z from "../../shared/zod";
import type { UserContext } from "../../shared/stores/agent-store";
import { defineTool } from "./tool";

/** A short plain-text summary: the model reads it, so no JSON to interpret. */
export function summarizeUserContext(context: UserContext | undefined): string {
  if (!context) return "Nothing is known about this user's plan, usage or preferences.";
  const parts = [`Plan: ${context.plan ?? "unknown"}.`];
  const usage = Object.entries(context.usage);
  if (usage.length > 0) parts.push(`Usage: ${usage.map(([k, v]) => `${k} ${formatValue(v)}`).join(", ")}.`);
  const prefs = Object.entries(context.preferences);
  if (prefs.length > 0) parts.push(`Preferences: ${prefs.map(([k, v]) => `${k} ${formatValue(v)}`).join(", ")}.`);
  return parts.join(" ");
}

const formatValue = (v: unknown) =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);

export const userContext = defineTool({
  name: "get_user_context",
  switch: { group: "user_context" },
  description:
    "Get the current user's plan, usage and preferences. Use it for questions about their account, " +
    "subscription, limits or settings, and to tailor answers to their preferences.",
  schema: z.object({}),
  needs: ["store"],
  unavailable: "The user's account details are unavailable right now.",
  async run(_args, { scope, deps }) {
    return { success: true, summary: summarizeUserContext(await deps.store.getUserContext(scope.userId)) };
  },
  offline: {
    trigger: "question",
    about: /\b(plan|subscription|tier|usage|quota|limit|account|billing|invoice|preferences?|settings)\b/i,
    args: () => ({}),
  },
  gathers: "facts",
});
