import type { Context } from "aws-lambda";

/** What a turn keeps back from the function's deadline to save itself and answer. */
export const SAVE_RESERVE_MS = 2_000;

/**
 * Epoch ms by which a run must end so the function can still save and respond before Lambda
 * stops it: its remaining time less a reserve. Past it, the response would be lost anyway.
 */
export function runDeadline(context: Pick<Context, "getRemainingTimeInMillis">, reserveMs = SAVE_RESERVE_MS): number {
  return Date.now() + Math.max(0, context.getRemainingTimeInMillis() - reserveMs);
}
