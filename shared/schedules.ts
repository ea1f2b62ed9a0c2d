import { Cron } from "croner";

/**
 * A cron's schedule, as LangGraph's crons take it: five fields (minute, hour, day of month, month,
 * day of week), in UTC. Parsed by croner (the local scheduler's and the next run date's), and
 * written for EventBridge Scheduler, whose cron has six fields, days of week 1-7 from Sunday, and
 * needs `?` in one of the two day fields: a schedule naming both a day of month and a day of week
 * cannot run there, so it is refused here rather than at deploy.
 */
const FIELDS = 5;
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/** Why a schedule cannot run, or undefined when it can. */
export function scheduleProblem(schedule: string): string | undefined {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== FIELDS)
    return "schedule must have five fields: minute hour day-of-month month day-of-week (UTC)";
  // croner reads `?` as "any"; EventBridge's `?` is written here, in the day field not named.
  if (schedule.includes("?")) return "schedule: write * rather than ?";
  try {
    new Cron(schedule, { paused: true, timezone: "UTC" });
  } catch (err) {
    return `schedule: ${(err as Error).message}`;
  }
  const [, , dom, , dow] = fields as [string, string, string, string, string];
  if (dom !== "*" && dow !== "*")
    return "schedule: name a day of month or a day of week, not both (EventBridge Scheduler runs one or the other)";
  if (dow.includes("/")) return "schedule: a step in the day of week is not supported; list the days (1,3,5)";
  // W only in the day of month: the day of week's "WED" is a name.
  if (/[LW#]/i.test(dom) || /[L#]/i.test(dow)) return "schedule: L, W and # are not supported";
  if (!nextRunAfter(schedule, new Date()))
    return "schedule never runs: no date matches it (a 30th of February, a 31st of a short month)";
  return undefined;
}

/** The first run after `after`, in UTC; undefined when the schedule has none left. */
export function nextRunAfter(schedule: string, after: Date): Date | undefined {
  return new Cron(schedule, { paused: true, timezone: "UTC" }).nextRun(after) ?? undefined;
}

/**
 * The days of week a field names, 0 (Sunday) to 6: croner's reading, where 7 is Sunday too, so a
 * range through it ("5-7", "SAT-SUN") is Friday to Saturday and Sunday. Hand-written because EventBridge's
 * days run 1-7 from Sunday with no 7-as-Sunday: the field is rewritten from the days, not the text.
 */
function daysOfWeek(field: string): Set<number> {
  const day = (token: string) => {
    const named = DAYS.indexOf(token.toUpperCase());
    return named >= 0 ? named : Number(token);
  };
  const days = new Set<number>();
  for (const part of field.split(",")) {
    if (part === "*") return new Set([0, 1, 2, 3, 4, 5, 6]);
    const [from, to = from] = part.split("-") as [string, string?];
    const [first, last] = [day(from), day(to)];
    // "SAT-SUN": a range ending on Sunday by name ends on 7, as croner reads it.
    for (let d = first; d <= (last < first && last === 0 ? 7 : last); d++) days.add(d % 7);
  }
  return days;
}

/** Days as EventBridge names them, consecutive ones as a range: {0, 5, 6} is "SUN,FRI-SAT". */
function dayList(days: Set<number>): string {
  const sorted = [...days].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    runs.push(i === j ? DAYS[sorted[i]!]! : `${DAYS[sorted[i]!]}-${DAYS[sorted[j]!]}`);
    i = j + 1;
  }
  return runs.join(",");
}

/** The schedule as EventBridge Scheduler's `cron(...)` expression (call scheduleProblem first). */
export function eventBridgeExpression(schedule: string): string {
  const [minute, hour, dom, month, dow] = schedule.trim().split(/\s+/) as [string, string, string, string, string];
  const days = daysOfWeek(dow);
  // Every day of the week named is no day restriction: the day of month says it (it is * then).
  if (days.size === 7) return `cron(${minute} ${hour} ${dom} ${month} ? *)`;
  return `cron(${minute} ${hour} ? ${month} ${dayList(days)} *)`;
}
