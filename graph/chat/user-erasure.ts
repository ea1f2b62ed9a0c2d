import type { Backends } from "../../shared/backends";
import { AppError, storeUnavailable } from "../../shared/errors";
import { userFolder } from "../../shared/files/keys";
import { AgentAssistants } from "../../shared/stores/agent-assistants";
import { AgentCrons } from "../../shared/stores/agent-crons";
import { AgentThreads } from "../../shared/stores/agent-threads";
import { SessionOwners } from "../../shared/stores/session-owners";
import type { ErasedCounts } from "../../shared/stores/user-data";
import { DynamoDBSaver } from "../checkpoint";
import { deleteSessionEverywhere } from "./session-deletion";

export interface ErasureReport extends Partial<ErasedCounts> {
  /** sessions (and Agent Server threads) removed from the state table, with their files and runs */
  sessions: number;
  /** the user's Agent Server assistants, every version of each */
  assistants: number;
  /** the user's crons, with their schedules */
  crons: number;
}

const busy = () =>
  new AppError(409, "session_busy", "a message of this user's is still being answered; retry the erasure");

/**
 * Erases everything held about a user, in every store (docs/user-data.md), for DELETE /api/me and
 * DELETE /api/admin/users/{id}. Synchronous: every step is a bounded number of requests per
 * session, and each is idempotent, so a failure (or a turn still running: 409) is answered and the
 * whole erasure retried; it answers only once every store has forgotten the user.
 *
 * The order keeps anything from coming back:
 *   1. Supabase first, in one transaction: every session the tables know is tombstoned (by a hash
 *      of its id), then transcripts, session rows, traces, memories (superseded ones too) and user
 *      context go. From here a memory extracted from any of those sessions is refused in the
 *      database (012_user_data.sql), however late its message arrives.
 *   2. Every session the state table knows (the owner records' Scan, and the Agent Server's
 *      thread list) goes by the one session deletion: under its lease, so a running turn finishes
 *      first; its state, files and runs with it.
 *   3. The user's whole attachments folder (an upload never completed has no record), and
 *      assistants. Not the usage counters: they name nobody, expire in two days, and erasing them
 *      would reset the user's quotas.
 *   4. Supabase once more, with the sessions step 2 found: a turn that finished meanwhile saved
 *      its transcript after step 1, and its session is tombstoned now too.
 */
export async function eraseUser(
  backends: Backends,
  userId: string,
  saver?: Pick<DynamoDBSaver, "deleteThread">,
): Promise<ErasureReport> {
  const { config, dynamo, userData } = backends;
  const supabase = (sessionIds: string[]) =>
    userData?.erase(userId, sessionIds).catch((err) => {
      throw storeUnavailable(err);
    });
  const owners = new SessionOwners(dynamo, config.CHECKPOINT_TABLE);
  const threads = new AgentThreads(dynamo, config.CHECKPOINT_TABLE);
  const [owned, threadRecords] = await Promise.all([owners.sessionsOf(userId), threads.list(userId)]);
  const sessionIds = [...new Set([...owned, ...threadRecords.map((t) => t.threadId)])];

  const first = await supabase(sessionIds);
  const deleter = saver ?? new DynamoDBSaver({ client: dynamo, tableName: config.CHECKPOINT_TABLE });
  for (const sessionId of sessionIds)
    await deleteSessionEverywhere(backends, userId, sessionId, deleter, "throw", busy);
  await backends.files?.deleteUnder(userFolder(userId));
  const assistants = await new AgentAssistants(dynamo, config.CHECKPOINT_TABLE).remove(userId);
  const crons = await eraseCrons(backends, userId);
  const last = await supabase(sessionIds);
  return { ...sumCounts(first, last), sessions: sessionIds.length, assistants, crons };
}

/** The user's crons: each schedule first (so none fires for a user who is gone), then its record. */
async function eraseCrons({ dynamo, config, cronScheduler }: Backends, userId: string): Promise<number> {
  const store = new AgentCrons(dynamo, config.CHECKPOINT_TABLE);
  const crons = await store.list(userId);
  for (const cron of crons) {
    await cronScheduler?.remove(cron.cronId);
    await store.remove(userId, cron.cronId);
  }
  return crons.length;
}

function sumCounts(a: ErasedCounts | undefined, b: ErasedCounts | undefined): Partial<ErasedCounts> {
  if (!a || !b) return {};
  return {
    transcripts: a.transcripts + b.transcripts,
    traces: a.traces + b.traces,
    memories: a.memories + b.memories,
    user_context: a.user_context + b.user_context,
    store_items: a.store_items + b.store_items,
  };
}
