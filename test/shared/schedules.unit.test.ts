import fc from "fast-check";
import { Cron } from "croner";
import { eventBridgeExpression, nextRunAfter, scheduleProblem } from "../../shared/schedules";

describe("cron schedules", () => {
  it("take five UTC fields and give the next run", () => {
    expect(scheduleProblem("*/5 * * * *")).toBeUndefined();
    expect(nextRunAfter("*/5 * * * *", new Date("2026-01-01T00:01:00Z"))!.toISOString()).toBe(
      "2026-01-01T00:05:00.000Z",
    );
    expect(nextRunAfter("30 9 * * 1-5", new Date("2026-01-03T10:00:00Z"))!.toISOString()).toBe(
      "2026-01-05T09:30:00.000Z", // Saturday to Monday 09:30 UTC
    );
  });

  it.each([
    ["", /five fields/],
    ["* * * *", /five fields/],
    ["0 * * * * *", /five fields/],
    ["61 * * * *", /schedule:/],
    ["a b c d e", /schedule:/],
    ["0 0 1 * 1", /not both/],
    ["0 0 * * */2", /step in the day of week/],
    ["0 0 L * *", /schedule:|not supported/],
    ["0 0 * * 5#3", /schedule:|not supported/],
    // Never runs: croner finds no 30th of February (its next run date would be null).
    ["0 0 30 2 *", /never runs/],
    ["0 0 31 4,6,9,11 *", /never runs/],
    // `?` is EventBridge's, written here; croner reads it as "any", which the user did not say.
    ["0 0 ? * 1", /\?/],
    ["0 0 * * ?", /\?/],
    ["0 0 * ? *", /\?/],
  ])("refuses %j", (schedule, reason) => {
    expect(scheduleProblem(schedule)).toMatch(reason);
  });

  it("writes EventBridge Scheduler's six-field cron, days of week by name, ? in the day field not named", () => {
    expect(eventBridgeExpression("*/5 * * * *")).toBe("cron(*/5 * * * ? *)");
    expect(eventBridgeExpression("30 9 * * 1-5")).toBe("cron(30 9 ? * MON-FRI *)");
    expect(eventBridgeExpression("0 8 * * 0,6")).toBe("cron(0 8 ? * SUN,SAT *)");
    expect(eventBridgeExpression("0 8 * * 7")).toBe("cron(0 8 ? * SUN *)");
    expect(eventBridgeExpression("15 2 1 */3 *")).toBe("cron(15 2 1 */3 ? *)");
    expect(eventBridgeExpression("0 8 * * MON-FRI")).toBe("cron(0 8 ? * MON-FRI *)");
  });

  // 7 is Sunday too: a range through it is every day to Saturday, then Sunday, never "SUN-SUN"
  // (which EventBridge reads as Sunday alone).
  it.each([
    ["0 8 * * 0-7", "cron(0 8 * * ? *)"],
    ["0 8 * * 5-7", "cron(0 8 ? * SUN,FRI-SAT *)"],
    ["0 8 * * 6-7,1", "cron(0 8 ? * SUN-MON,SAT *)"],
    ["0 8 * * 1-7", "cron(0 8 * * ? *)"],
    ["0 8 * * sat-sun", "cron(0 8 ? * SUN,SAT *)"],
  ])("writes %j's days as the days croner runs it", (schedule, expression) => {
    expect(scheduleProblem(schedule)).toBeUndefined();
    expect(eventBridgeExpression(schedule)).toBe(expression);
  });

  it("names the same days of week in EventBridge's expression as croner runs the schedule on (property)", () => {
    const NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
    const part = fc.oneof(
      fc.integer({ min: 0, max: 7 }).map(String),
      fc
        .tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 }))
        .filter(([a, b]) => a <= b)
        .map(([a, b]) => `${a}-${b}`),
      fc.integer({ min: 0, max: 6 }).map((d) => NAMES[d]!.toLowerCase()),
    );
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const schedule = `0 8 * * ${parts.join(",")}`;
        expect(scheduleProblem(schedule)).toBeUndefined();
        const runs = new Cron(schedule, { paused: true, timezone: "UTC" }).nextRuns(
          21,
          new Date("2026-01-01T00:00:00Z"),
        );
        const croner = new Set(runs.map((d) => NAMES[d.getUTCDay()]));
        const field = /^cron\(\S+ \S+ (\S+) \S+ (\S+) \*\)$/.exec(eventBridgeExpression(schedule))!;
        const written = new Set<string>();
        if (field[2] === "?") for (const n of NAMES) written.add(n);
        else
          for (const range of field[2]!.split(",")) {
            const [a, b = a] = range.split("-");
            for (let d = NAMES.indexOf(a!); d <= NAMES.indexOf(b!); d++) written.add(NAMES[d]!);
          }
        expect([...written].sort()).toEqual([...croner].sort());
      }),
    );
  });
});
