import type { Backends } from "../../shared/backends";
import { AppError, storeUnavailable } from "../../shared/errors";
import { fileService } from "../../shared/files/service";
import { AgentThreads } from "../../shared/stores/agent-threads";
import { SessionOwners } from "../../shared/stores/session-owners";
import { DynamoDBSaver } from "../checkpoint";

/** What the deleting route answers when the session is not the caller's, or a turn holds it too long. */
export interface DeletionErrors {
  notFound: () => AppError;
  busy: () => AppError;
}

/**
 * The one deletion of a session, for DELETE /api/sessions/{id} and DELETE /threads/{id} alike (and
 * a stateless Agent Server run's thread): everything the session left goes. Under the session's
 * lease, as a turn runs: a running turn finishes (and is saved) first, waiting up to
 * SESSION_QUEUE_WAIT_MS, and a turn that waited for the lease finds the session gone (the lease is
 * on the owner record, which goes with the partition). Taking the lease is also the owner check:
 * anyone else's request gets `notFound()` and deletes nothing.
 *
 * The order makes a failure retryable: the transcript first (if the rest then fails, a retry still
 * finds the session), the files' objects before their records, the caller's thread list entry,
 * then the whole partition: checkpoints, file records, runs, and the owner record with its lease.
 */
export async function deleteSession(
  backends: Backends,
  userId: string,
  sessionId: string,
  errors: DeletionErrors,
  saver?: Pick<DynamoDBSaver, "deleteThread">,
): Promise<void> {
  const { config, dynamo, conversations } = backends;
  const owners = new SessionOwners(
    dynamo,
    config.CHECKPOINT_TABLE,
    config.CHECKPOINT_TTL_DAYS,
    config.SESSION_LEASE_MS,
  );
  const { session, lease } = await owners.leaseWaiting(sessionId, userId, config.SESSION_QUEUE_WAIT_MS);
  if (!session) throw errors.notFound();
  if (!lease) throw errors.busy();
  try {
    await conversations?.deleteSession(sessionId, userId).catch((err) => {
      throw storeUnavailable(err);
    });
    await fileService(backends)?.deleteSessionFiles(sessionId);
    await new AgentThreads(dynamo, config.CHECKPOINT_TABLE).remove(userId, sessionId);
    await (saver ?? new DynamoDBSaver({ client: dynamo, tableName: config.CHECKPOINT_TABLE })).deleteThread(sessionId);
  } finally {
    await lease.release();
  }
}

const gone = () => new AppError(404, "session_not_found", "no such session");

/**
 * The one deletion, for a session the system removes on its own (a user's erasure, retention):
 * when its owner record is gone already (DynamoDB's TTL, or a thread record whose session never
 * started), what is left of it anywhere goes all the same. Answers false when the session was busy
 * (a turn running), so nothing was deleted; `busy` rethrows that instead.
 */
export async function deleteSessionEverywhere(
  backends: Backends,
  userId: string,
  sessionId: string,
  saver: Pick<DynamoDBSaver, "deleteThread">,
  onBusy: "skip" | "throw",
  busy: () => AppError,
): Promise<boolean> {
  try {
    await deleteSession(backends, userId, sessionId, { notFound: gone, busy }, saver);
    return true;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.status === 409 && onBusy === "skip") return false;
    if (err.code !== "session_not_found") throw err;
  }
  await backends.conversations?.deleteSession(sessionId, userId).catch((err) => {
    throw storeUnavailable(err);
  });
  await fileService(backends)?.deleteSessionFiles(sessionId);
  await new AgentThreads(backends.dynamo, backends.config.CHECKPOINT_TABLE).remove(userId, sessionId);
  await saver.deleteThread(sessionId);
  return true;
}
