import pLimit from "p-limit";
import type { Backends } from "../../shared/backends";
import { AppError, storeUnavailable } from "../../shared/errors";
import { fileService } from "../../shared/files/service";
import { FileRecords } from "../../shared/files/records";
import { AgentRuns, type RunRecord } from "../../shared/stores/agent-runs";
import { AgentThreads } from "../../shared/stores/agent-threads";
import { RunEventLog } from "../../shared/stores/run-events";
import { SessionOwners } from "../../shared/stores/session-owners";
import { DynamoDBSaver } from "../checkpoint";

/** What the deleting route answers when the session is not the caller's, or a turn holds it too long. */
export interface DeletionErrors {
  notFound: () => AppError;
  busy: () => AppError;
}

/** How a deletion the system makes on its own (retention) differs from one a user asks for. */
export interface DeletionTerms {
  /** how long to wait for a running turn (default SESSION_QUEUE_WAIT_MS); then busy */
  waitMs?: number;
  /** asked under the lease, before anything goes: false keeps the session (busy) */
  stillIdle?: () => Promise<boolean>;
}

/**
 * The one deletion of a session, for DELETE /api/sessions/{id} and DELETE /threads/{id} alike (and
 * a stateless Agent Server run's thread): everything the session left goes. Under the session's
 * lease, as a turn runs: a running turn finishes (and is saved) first, waiting up to
 * SESSION_QUEUE_WAIT_MS, and a turn that waited for the lease finds the session gone (the lease is
 * on the owner record, which goes with the partition). Taking the lease is also the owner check:
 * anyone else's request gets `notFound()` and deletes nothing.
 *
 * What goes, and in which order: removeSessionData.
 */
export async function deleteSession(
  backends: Backends,
  userId: string,
  sessionId: string,
  errors: DeletionErrors,
  saver?: Pick<DynamoDBSaver, "deleteThread">,
  terms: DeletionTerms = {},
): Promise<void> {
  const { config, dynamo } = backends;
  const owners = new SessionOwners(
    dynamo,
    config.CHECKPOINT_TABLE,
    config.CHECKPOINT_TTL_DAYS,
    config.SESSION_LEASE_MS,
  );
  const { session, lease } = await owners.leaseToDelete(
    sessionId,
    userId,
    terms.waitMs ?? config.SESSION_QUEUE_WAIT_MS,
  );
  if (!session) throw errors.notFound();
  if (!lease) throw errors.busy();
  try {
    if (terms.stillIdle && !(await terms.stillIdle())) throw errors.busy();
    await removeSessionData(
      backends,
      userId,
      sessionId,
      saver ?? new DynamoDBSaver({ client: dynamo, tableName: config.CHECKPOINT_TABLE }),
    );
  } finally {
    await lease.release();
  }
}

const gone = () => new AppError(404, "session_not_found", "no such session");

/**
 * The one deletion, for a session the system removes on its own (a user's erasure, retention):
 * when its owner record is gone already (DynamoDB's TTL, or a thread record whose session never
 * started), what is left of it anywhere goes all the same, claimed for the user first so that
 * nobody can take the id while it goes. When the id is another user's now (a client-chosen thread
 * id taken after the user's record expired), only the user's own traces of it go: their transcript
 * rows and thread-list entry, never the other user's thread. Answers false when the session was
 * busy (a turn running), so nothing was deleted; `busy` rethrows that instead.
 */
export async function deleteSessionEverywhere(
  backends: Backends,
  userId: string,
  sessionId: string,
  saver: Pick<DynamoDBSaver, "deleteThread">,
  onBusy: "skip" | "throw",
  busy: () => AppError,
  terms: DeletionTerms = {},
): Promise<boolean> {
  // With the table's TTL: a claim whose deletion then fails expires as any session does.
  const owners = new SessionOwners(
    backends.dynamo,
    backends.config.CHECKPOINT_TABLE,
    backends.config.CHECKPOINT_TTL_DAYS,
  );
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await deleteSession(backends, userId, sessionId, { notFound: gone, busy }, saver, terms);
      return true;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 409 && onBusy === "skip") return false;
      if (err.code !== "session_not_found") throw err;
    }
    if ((await owners.owner(sessionId)) !== undefined || attempt > 0) break; // another user's
    // Nobody's: the user's for as long as the deletion takes (the next attempt's lease).
    await owners.claim(sessionId, userId);
  }
  await removeOwnTraces(backends, userId, sessionId);
  return true;
}

/**
 * What of a user's is left in a session another user owns now: their transcript rows and thread
 * list entry, and their runs (with their logs) and file records in its partition. The rest of the
 * partition is the other user's.
 */
async function removeOwnTraces(backends: Backends, userId: string, sessionId: string): Promise<void> {
  const { config, dynamo } = backends;
  await removeTranscriptAndEntry(backends, userId, sessionId);
  const runs = new AgentRuns(dynamo, config.CHECKPOINT_TABLE);
  for (const run of await removeRunLogs(backends, sessionId, (r) => r.userId === userId))
    await runs.remove(sessionId, run.runId);
  const records = new FileRecords(dynamo, config.CHECKPOINT_TABLE);
  for (const file of (await records.list(sessionId)).filter((f) => f.user_id === userId))
    await records.delete(sessionId, file.file_id);
}

/**
 * Everything a session left, in an order that makes a failure retryable: the transcript first (if
 * the rest then fails, a retry still finds the session), the caller's thread list entry, the
 * files' objects before their records, the runs' event logs (they hold the runs' messages; the run
 * records name them), then the whole partition: checkpoints, file records, runs, and the owner
 * record with its lease.
 */
async function removeSessionData(
  backends: Backends,
  userId: string,
  sessionId: string,
  saver: Pick<DynamoDBSaver, "deleteThread">,
): Promise<void> {
  await removeTranscriptAndEntry(backends, userId, sessionId);
  await fileService(backends)?.deleteSessionFiles(sessionId);
  await removeRunLogs(backends, sessionId);
  await saver.deleteThread(sessionId);
}

/** The user's transcript of the session (Supabase) and its entry in their thread list. */
async function removeTranscriptAndEntry(backends: Backends, userId: string, sessionId: string): Promise<void> {
  await backends.conversations?.deleteSession(sessionId, userId).catch((err) => {
    throw storeUnavailable(err);
  });
  await new AgentThreads(backends.dynamo, backends.config.CHECKPOINT_TABLE).remove(userId, sessionId);
}

/**
 * The event logs of a thread's runs (those `which` picks), a few at a time: a thread of many runs
 * is neither one request after another nor all at once. Answers the runs whose logs went.
 */
export async function removeRunLogs(
  { dynamo, config }: Pick<Backends, "dynamo" | "config">,
  threadId: string,
  which: (run: RunRecord) => boolean = () => true,
): Promise<RunRecord[]> {
  const logs = new RunEventLog(dynamo, config.CHECKPOINT_TABLE);
  const runs = (await new AgentRuns(dynamo, config.CHECKPOINT_TABLE).list(threadId)).filter(which);
  const few = pLimit(4);
  await Promise.all(runs.map((run) => few(() => logs.remove(run.runId))));
  return runs;
}
