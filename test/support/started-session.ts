import { randomUUID } from "node:crypto";
import { storedSettings } from "../../shared/session-settings";
import type { SessionOwners } from "../../shared/stores/session-owners";

/** A new session of `userId` in no project, with default settings, its lease let go: what a first turn leaves. */
export async function startedSession(owners: SessionOwners, userId = "ann"): Promise<string> {
  const sessionId = randomUUID();
  await (await owners.claimLeased(sessionId, userId, null, storedSettings(undefined))).lease!.release();
  return sessionId;
}
