import * as z from "./zod";
import { type AppError, sessionNotFound } from "./errors";
import type { SessionOwners, SessionRecord } from "./stores/session-owners";

const SessionId = z.uuid();

/**
 * Ownership before effect: the one check a request naming a session (an Agent Server thread) makes
 * before it reads, writes or cancels anything of it. Anything but the caller's own session, an id
 * that cannot be one included, is `notFound()`, as if it did not exist: another user learns nothing
 * and changes nothing. One consistent GetItem on the session's owner record (which also keeps the
 * owner's active session from expiring; nobody else's request touches it).
 *
 * A chat turn needs no separate read: its lease is taken by one conditional write on the same
 * record, `user_id = :caller`, which is this check and the lease at once (shared/stores/session-owners.ts).
 */
export async function ownedSession(
  owners: Pick<SessionOwners, "session">,
  userId: string,
  sessionId: string | undefined,
  notFound: () => AppError = sessionNotFound,
  { toDelete = false }: { toDelete?: boolean } = {},
): Promise<SessionRecord> {
  if (!SessionId.safeParse(sessionId).success) throw notFound();
  const session = await owners.session(sessionId!, userId);
  if (session?.userId !== userId) throw notFound();
  // One whose deletion began is gone to its owner too, though a store failed before it finished;
  // only a deletion (`toDelete`, the retry that finishes it) still finds it.
  if (session.deleting && !toDelete) throw notFound();
  return session;
}
