import { Cron } from "croner";

/**
 * A cron's schedule, as LangGraph's crons take it: five fields (minute, hour, day of month, month,
 * day of week), in UTC. Parsed by croner (the local scheduler's and the next run date's), and
 * written for EventBridge Scheduler, whose cron has six fields, days of week 1-7 from Sunday, and
 * needs `?` in one of the two day fields: a schedule naming both a day of month and a day of week
 * cannot run there, so it is refused here rather than at deploy.
 */
const FIELDS = 5;
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

/** Why a schedule cannot run, or undefined when it can. */
export function scheduleProblem(schedule: string): string | undefined {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== FIELDS)
    return "schedule must have five fields: minute hour day-of-month month day-of-week (UTC)";
  try {
    new Cron(schedule, { paused: true, timezone: "UTC" });
  } catch (err) {
    return `schedule: ${(err as Error).message}`;
  }
  const [, , dom, , dow] = fields as [string, string, string, string, string];
  if (dom !== "*" && dow !== "*")
    return "schedule: name a day of month or a day of week, not both (EventBridge Scheduler runs one or the other)";
  if (dow.includes("/")) return "schedule: a step in the day of week is not supported; list the days (1,3,5)";
  if (/[LW#]/i.test(dom + dow)) return "schedule: L, W and # are not supported";
  return undefined;
}

/** The first run after `after`, in UTC; undefined when the schedule has none left. */
export function nextRunAfter(schedule: string, after: Date): Date | undefined {
  return new Cron(schedule, { paused: true, timezone: "UTC" }).nextRun(after) ?? undefined;
}

/** The schedule as EventBridge Scheduler's `cron(...)` expression (call scheduleProblem first). */
export function eventBridgeExpression(schedule: string): string {
  const [minute, hour, dom, month, dow] = schedule.trim().split(/\s+/) as [string, string, string, string, string];
  const days = dow === "*" ? "?" : dow.replace(/\d/g, (d) => DAYS[Number(d)]!);
  return `cron(${minute} ${hour} ${dow === "*" ? dom : "?"} ${month} ${days} *)`;
}
