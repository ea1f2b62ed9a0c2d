import * as z from "../../shared/zod";
import { defineTool } from "./tool";

/** A time zone the runtime knows (IANA name), else undefined. */
function validZone(zone: unknown): string | undefined {
  if (typeof zone !== "string" || zone === "") return undefined;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

export const currentTime = defineTool({
  name: "get_current_time",
  description:
    "Get the current date and time in the user's time zone (from their saved preferences, else UTC). " +
    "Use it for questions about today's date, the time, the weekday, or how long until a date.",
  schema: z.object({}),
  needs: ["store"],
  // It reads the user's saved preferences (their time zone): off with the rest of their context.
  switch: { group: "user_context" },
  unavailable: "The current time is unavailable right now.",
  async run(_args, { scope, deps }) {
    const preferences = (await deps.store.getUserContext(scope.userId))?.preferences ?? {};
    const saved = preferences.timezone ?? preferences.time_zone;
    const zone = validZone(saved) ?? "UTC";
    const now = new Date();
    const local = new Intl.DateTimeFormat("en-GB", {
      timeZone: zone,
      dateStyle: "full",
      timeStyle: "short",
    }).format(now);
    return {
      success: true,
      summary: `It is ${local} in ${zone}${zone === "UTC" && saved === undefined ? " (no time zone is saved for this user)" : ""}.`,
      iso: now.toISOString(),
      timeZone: zone,
    };
  },
  offline: {
    trigger: /\b(what time|the time|what day|which day|today'?s date|what date|the date|current time)\b/i,
    args: () => ({}),
  },
});
