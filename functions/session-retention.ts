import type { Context } from "aws-lambda";
import type { Backends } from "../shared/backends";
import { createLogger } from "../shared/logger";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("session-retention");

/** Time kept back from the function's timeout, so a sweep ends itself rather than being cut off. */
const MARGIN_MS = 10_000;

/**
 * The retention sweep (graph/chat/retention.ts): sessions idle longer than SESSION_RETENTION_DAYS
 * are deleted everywhere. Invoked by an EventBridge schedule in AWS and by a timer locally
 * (infra/local/stack.ts); `now` is injectable so tests can move the clock.
 */
export function createRetentionHandler(backends: () => Promise<Backends> | Backends, now: () => number = Date.now) {
  return async (_event?: unknown, context?: Pick<Context, "getRemainingTimeInMillis">) => {
    const { expireIdleSessions } = await import("../graph/chat/retention");
    const deadline = context ? Date.now() + context.getRemainingTimeInMillis() - MARGIN_MS : undefined;
    const report = await expireIdleSessions(await backends(), now(), deadline);
    if (report.expired > 0 || report.busy > 0) logger.info("idle sessions expired", { ...report });
    return report;
  };
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ backends }: Wiring) => createRetentionHandler(backends);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
