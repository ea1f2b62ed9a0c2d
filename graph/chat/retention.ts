import type { Backends } from "../../shared/backends";
import { AppError } from "../../shared/errors";
import { DynamoDBSaver } from "../checkpoint";
import { deleteSessionEverywhere } from "./session-deletion";

export interface RetentionReport {
  /** sessions deleted everywhere */
  expired: number;
  /**
   * listed sessions kept: a turn held them when the sweep came (the next sweep takes them, unless
   * that turn made them active), or they had taken a turn since they were listed
   */
  busy: number;
}

const PAGE = 100;

const busy = () => new AppError(409, "session_busy", "a turn is running in this session");

/**
 * Expires sessions idle for longer than SESSION_RETENTION_DAYS everywhere, not only in DynamoDB
 * (whose TTL takes the state alone): transcript, traces, session row, files and their objects,
 * Agent Server thread and runs, by the one session deletion. A session's last activity is its
 * Supabase row's updated_at (every recorded turn moves it). Run on a schedule (an EventBridge rule
 * in AWS, a timer locally); idempotent, so two sweeps at once or a retried one delete nothing
 * twice. Stops before `deadline` (epoch ms), leaving the rest to the next sweep. Memories outlive
 * their sessions by design (they are the user's, not the session's), as with DELETE /api/sessions/{id}.
 */
export async function expireIdleSessions(
  backends: Backends,
  now: number,
  deadline = Number.POSITIVE_INFINITY,
  saver?: Pick<DynamoDBSaver, "deleteThread">,
): Promise<RetentionReport> {
  const report: RetentionReport = { expired: 0, busy: 0 };
  const days = backends.config.SESSION_RETENTION_DAYS;
  if (days === undefined || !backends.userData) return report;
  const before = new Date(now - days * 86_400_000);
  const deleter = saver ?? new DynamoDBSaver({ client: backends.dynamo, tableName: backends.config.CHECKPOINT_TABLE });
  const { userData } = backends;
  // Each listed session once per sweep: a row its deletion could not remove is listed first again.
  const visited = new Set<string>();
  while (Date.now() < deadline) {
    const page = (await userData.idleSessions(before, PAGE + visited.size)).filter((s) => !visited.has(s.sessionId));
    if (page.length === 0) break;
    for (const { sessionId, userId } of page) {
      if (Date.now() >= deadline) break;
      visited.add(sessionId);
      // Never waits for a running turn, and reads the last turn again under the lease: a session
      // in use since it was listed is active, not expired.
      const terms = { waitMs: 0, stillIdle: () => userData.sessionIdle(sessionId, before) };
      if (await deleteSessionEverywhere(backends, userId, sessionId, deleter, "skip", busy, terms)) report.expired += 1;
      else report.busy += 1;
    }
  }
  return report;
}
