import { loadConfig } from "../../shared/config";
import { quotaExceeded, quotaScope, retryAfterSeconds, UserQuotas, windowsOf } from "../../shared/quotas";

describe("USER_QUOTAS", () => {
  it("reads turns per minute and tokens per day, either optional; unset limits nothing", () => {
    expect(loadConfig({}).USER_QUOTAS).toEqual({});
    expect(loadConfig({ USER_QUOTAS: '{"turnsPerMinute":10,"tokensPerDay":200000}' }).USER_QUOTAS).toEqual({
      turnsPerMinute: 10,
      tokensPerDay: 200000,
    });
  });

  it("refuses at startup, by name, what is not JSON, an unknown limit, or a limit that is not a positive whole number", () => {
    expect(() => loadConfig({ USER_QUOTAS: "10/min" })).toThrow(/USER_QUOTAS: must be a JSON object/);
    expect(() => loadConfig({ USER_QUOTAS: '{"turnsPerHour":10}' })).toThrow(/USER_QUOTAS/);
    expect(() => loadConfig({ USER_QUOTAS: '{"turnsPerMinute":0}' })).toThrow(/turnsPerMinute/);
    expect(() => loadConfig({ USER_QUOTAS: '{"tokensPerDay":1.5}' })).toThrow(/tokensPerDay/);
    expect(() => loadConfig({ USER_QUOTAS: "[]" })).toThrow(/USER_QUOTAS/);
  });
});

describe("quota windows", () => {
  const at = Date.UTC(2026, 10, 23, 23, 59, 30, 500);

  it("are the calendar minute and the UTC day", () => {
    expect(windowsOf(at)).toEqual({ minute: Math.floor(at / 60_000), day: "2026-11-23" });
    expect(windowsOf(at + 30_000).day).toBe("2026-11-24");
  });

  it("say when to retry: the next minute, or the next UTC day, never 0 s", () => {
    expect(retryAfterSeconds("turnsPerMinute", at)).toBe(30);
    expect(retryAfterSeconds("tokensPerDay", at)).toBe(30);
    expect(retryAfterSeconds("tokensPerDay", Date.UTC(2026, 0, 1))).toBe(86_400);
    expect(retryAfterSeconds("turnsPerMinute", Date.UTC(2026, 0, 1, 0, 0, 59, 999))).toBe(1);
  });

  it("refuse with 429 quota_exceeded, the limit and its value, and Retry-After", () => {
    const err = quotaExceeded("turnsPerMinute", 3, at);
    expect(err.status).toBe(429);
    expect(err.code).toBe("quota_exceeded");
    expect(err.details).toEqual({ limit: "turnsPerMinute", value: 3, retry_after_seconds: 30 });
    expect(err.headers).toEqual({ "retry-after": "30" });
  });

  it("send a turn refused by running turns' reservations back soon, never past the day's end", () => {
    const noon = Date.UTC(2026, 10, 23, 12);
    expect(quotaExceeded("tokensPerDay", 5000, noon, undefined, true).headers).toEqual({ "retry-after": "30" });
    expect(quotaExceeded("tokensPerDay", 5000, noon, undefined, true).message).toBe(
      "over this deployment's limit of 5000 model tokens a day; running turns hold the rest of the day's tokens until they end; retry in 30 s",
    );
    // 23:59:50: the new day comes first.
    expect(quotaExceeded("tokensPerDay", 5000, at + 20_000, undefined, true).details).toMatchObject({
      retry_after_seconds: 10,
    });
  });

  it("name whose limit was hit, the deployment's or a project's, in words that read right", () => {
    expect(quotaExceeded("turnsPerMinute", 1, at).message).toBe(
      "over this deployment's limit of 1 turn a minute; retry in 30 s",
    );
    expect(quotaExceeded("turnsPerMinute", 3, at, "acme").message).toBe(
      'over project "acme"\'s limit of 3 turns a minute; retry in 30 s',
    );
    expect(quotaExceeded("tokensPerDay", 1, at, "acme").message).toBe(
      'over project "acme"\'s limit of 1 model token a day; retry in 30 s',
    );
  });
});

describe("quotas per project", () => {
  const quotas = UserQuotas.parse({ turnsPerMinute: 10, tokensPerDay: 5000, projects: { p1: { turnsPerMinute: 2 } } });

  it("gives a project with limits of its own its own count, each limit it leaves out the deployment's", () => {
    expect(quotaScope(quotas, "p1")).toEqual({ scope: "p1", limits: { turnsPerMinute: 2, tokensPerDay: 5000 } });
    expect(quotaScope(quotas, "p2")).toEqual({ scope: undefined, limits: { turnsPerMinute: 10, tokensPerDay: 5000 } });
    expect(quotaScope(quotas, null)).toEqual({ scope: undefined, limits: { turnsPerMinute: 10, tokensPerDay: 5000 } });
  });

  it("refuses a project entry with unknown keys, bad values or an empty id", () => {
    for (const bad of [
      { projects: { p1: { turns: 2 } } },
      { projects: { p1: { turnsPerMinute: 0 } } },
      { projects: { "": { turnsPerMinute: 1 } } },
      { projects: [] },
    ])
      expect(UserQuotas.safeParse(bad).success).toBe(false);
  });
});
