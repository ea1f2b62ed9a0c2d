import * as z from "./zod";
import { AppError } from "./errors";

const limits = () =>
  z.strictObject({
    turnsPerMinute: z.optional(z.number().check(z.int(), z.gte(1), z.lte(100_000))),
    tokensPerDay: z.optional(z.number().check(z.int(), z.gte(1), z.lte(1_000_000_000_000))),
  });
/** A limit on each user: turns per calendar minute and model tokens per UTC day. */
export type QuotaLimits = z.infer<ReturnType<typeof limits>>;

/**
 * A deployment's per-user limits (USER_QUOTAS): turns per calendar minute and model tokens per UTC
 * day, and per project (`projects`, keyed by project id) limits of their own. Any may be left out
 * (no limit on it); `{}` or unset limits nothing.
 */
export const UserQuotas = z.lazy(() => {
  // Built when USER_QUOTAS is read (shared/config.ts): a deployment without quotas never builds it.
  const Limits = limits();
  return z.strictObject({
    ...Limits.shape,
    ...{
      projects: z.optional(z.record(z.string().check(z.minLength(1), z.maxLength(128)), Limits)),
    },
  });
});
export type UserQuotas = z.infer<typeof UserQuotas>;

/**
 * What a turn in `projectId` counts against, and where it is counted. A project with limits of its
 * own has its own count (`scope`, the project id) and its limits, each falling back to the
 * deployment's where the project leaves it out; any other turn counts in the user's deployment-wide
 * count against the deployment's limits.
 */
export function quotaScope(quotas: UserQuotas, projectId: string | null | undefined) {
  const { projects, ...deployment } = quotas;
  const own = projectId ? projects?.[projectId] : undefined;
  if (!own) return { scope: undefined, limits: deployment as QuotaLimits };
  return { scope: projectId!, limits: { ...deployment, ...own } as QuotaLimits };
}

/** Whether `limits` limits anything. */
export const limitsAnything = (limits: QuotaLimits) =>
  limits.turnsPerMinute !== undefined || limits.tokensPerDay !== undefined;

export type QuotaLimit = keyof QuotaLimits;

/** The windows a moment falls in: its minute (epoch minutes) and its UTC day (YYYY-MM-DD). */
export function windowsOf(nowMs: number) {
  const minute = Math.floor(nowMs / 60_000);
  const day = new Date(nowMs).toISOString().slice(0, 10);
  return { minute, day };
}

/** Whole seconds until the window `limit` counts in starts again (at least 1). */
export function retryAfterSeconds(limit: QuotaLimit, nowMs: number): number {
  const next =
    limit === "turnsPerMinute"
      ? (Math.floor(nowMs / 60_000) + 1) * 60_000
      : Date.UTC(new Date(nowMs).getUTCFullYear(), new Date(nowMs).getUTCMonth(), new Date(nowMs).getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - nowMs) / 1000));
}

/**
 * When a day's tokens are over the limit only through running turns' reservations, how soon to come
 * back: they clear as those turns end, which is seconds for most turns (a turn's lease, which a
 * running turn renews, lasts as long).
 */
export const RESERVATIONS_RETRY_SECONDS = 30;

/**
 * 429 quota_exceeded: which limit, its value, whose it is (the deployment's, or `project`'s own),
 * and when to come back (also as Retry-After): when the window starts again, or, where running
 * turns' reservations are what fills the day (`heldByRunningTurns`), soon.
 */
export function quotaExceeded(
  limit: QuotaLimit,
  value: number,
  nowMs: number,
  project?: string,
  heldByRunningTurns = false,
): AppError {
  const window = retryAfterSeconds(limit, nowMs);
  const retryAfter = heldByRunningTurns ? Math.min(window, RESERVATIONS_RETRY_SECONDS) : window;
  const unit = limit === "turnsPerMinute" ? ["turn", "a minute"] : ["model token", "a day"];
  const what = `${value} ${unit[0]}${value === 1 ? "" : "s"} ${unit[1]}`;
  const whose = project === undefined ? "this deployment's" : `project ${JSON.stringify(project)}'s`;
  const why = heldByRunningTurns ? "; running turns hold the rest of the day's tokens until they end" : "";
  return new AppError(429, "quota_exceeded", `over ${whose} limit of ${what}${why}; retry in ${retryAfter} s`, {
    details: { limit, value, retry_after_seconds: retryAfter },
    headers: { "retry-after": String(retryAfter) },
  });
}
