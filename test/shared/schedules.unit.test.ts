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
  ])("refuses %j", (schedule, reason) => {
    expect(scheduleProblem(schedule)).toMatch(reason);
  });

  it("writes EventBridge Scheduler's six-field cron, days of week by name, ? in the day field not named", () => {
    expect(eventBridgeExpression("*/5 * * * *")).toBe("cron(*/5 * * * ? *)");
    expect(eventBridgeExpression("30 9 * * 1-5")).toBe("cron(30 9 ? * MON-FRI *)");
    expect(eventBridgeExpression("0 8 * * 0,6")).toBe("cron(0 8 ? * SUN,SAT *)");
    expect(eventBridgeExpression("0 8 * * 7")).toBe("cron(0 8 ? * SUN *)");
    expect(eventBridgeExpression("15 2 1 */3 *")).toBe("cron(15 2 1 */3 ? *)");
  });
});
