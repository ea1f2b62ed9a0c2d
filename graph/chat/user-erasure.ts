import type { Backends } from "../../shared/backends";
import { AppError, storeUnavailable } from "../../shared/errors";
import { userFolder } from "../../shared/files/keys";
import { AgentAssistants } from "../../shared/stores/agent-assistants";
import { AgentCrons } from "../../shared/stores/agent-crons";
import { AgentThreads } from "../../shared/stores/agent-threads";
import { ErasureMarks } from "../../shared/stores/erasure-marks";
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
 *      context go. From here a memory extracted from a turn of any of those sessions is refused in
 *      the database (012_user_data.sql, 014), however late its message arrives.
 *   2. Every session the state table knows (the user index's owner records, and the Agent
 *      Server's thread list) goes by the one session deletion: under its lease, so a running turn
 *      finishes first; its state, files and runs with it.
 *   3. The user's assistants and crons (before step 2 in each round). Not the usage counters:
 *      they name nobody, expire in two days, and erasing them would reset the user's quotas.
 *   4. Supabase once more, with the sessions step 2 found: a turn that finished meanwhile saved
 *      its transcript after step 1, and its session's tombstone now dates from this pass.
 * Then the sessions are listed again, and the steps repeat for any session a turn started
 * meanwhile; the assistants and crons go once more after the last round. Last, the user's whole attachments folder (an upload never completed has no record).
 */
async function eraseUserRounds(
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
  const deleter = saver ?? new DynamoDBSaver({ client: dynamo, tableName: config.CHECKPOINT_TABLE });
  const erased = new Set<string>();
  const counts: Array<ErasedCounts | undefined> = [];
  let assistants = 0;
  let crons = 0;
  // Round after round until a listing finds no session the erasure has not erased: a turn may
  // start a session once the first listing is taken, and that session goes too (under its lease,
  // once the turn ended). A user whose clients keep starting sessions gets 409 and retries.
  for (let round = 0; ; round++) {
    // The user index is eventually consistent: a session claimed just before a listing may be
    // missing from it, so each listing after the first waits out the index's usual lag.
    if (round > 0) await new Promise((r) => setTimeout(r, config.USER_INDEX_LAG_MS));
    const [owned, threadRecords] = await Promise.all([owners.sessionsOf(userId), threads.list(userId)]);
    const listed = [...new Set([...owned, ...threadRecords.map((t) => t.threadId)])];
    // An id erased in an earlier round is listed again when it was made again since (a client's
    // own thread id), or when the index has not caught up with its deletion: a consistent read of
    // its records tells the two apart.
    const found: string[] = [];
    for (const id of listed)
      if (!erased.has(id) || (await owners.owner(id)) === userId || (await threads.get(userId, id)) !== undefined)
        found.push(id);
    // Assistants and crons every round (crons first, so none fires into a session being deleted),
    // and once more at the end: one made while the erasure runs goes too. They force no round of
    // their own: a user making them in a loop (no quota, no model call) could hold the erasure off.
    ({ crons, assistants } = await sweepAgentRecords(backends, userId, { crons, assistants }));
    if (round > 0 && found.length === 0) break;
    if (round === MAX_ROUNDS) throw busy();
    counts.push(await supabase(found));
    for (const sessionId of found) await deleteSessionEverywhere(backends, userId, sessionId, deleter, "throw", busy);
    for (const sessionId of found) erased.add(sessionId);
    counts.push(await supabase([...erased]));
  }
  ({ crons, assistants } = await sweepAgentRecords(backends, userId, { crons, assistants }));
  // Last: anything a turn wrote under the folder meanwhile (an inline image, an export) goes too.
  await backends.files?.deleteUnder(userFolder(userId));
  return { ...sumCounts(counts), sessions: erased.size, assistants, crons };
}

/**
 * eraseUserRounds between its marks (ErasureMarks): counted in before anything goes, and out when
 * it stops, done or failed. An export running meanwhile then learns its link's object may have
 * been written after the folder was emptied, and deletes it (functions/me.ts).
 */
export async function eraseUser(
  backends: Backends,
  userId: string,
  saver?: Pick<DynamoDBSaver, "deleteThread">,
): Promise<ErasureReport> {
  const marks = new ErasureMarks(backends.dynamo, backends.config.CHECKPOINT_TABLE);
  await marks.began(userId);
  try {
    return await eraseUserRounds(backends, userId, saver);
  } finally {
    await marks.ended(userId);
  }
}

/** How many times the erasure lists the user's sessions before it gives up on a user still starting them. */
const MAX_ROUNDS = 3;

/** The user's crons and then assistants, removed, added to the counts so far. */
async function sweepAgentRecords(backends: Backends, userId: string, so: { crons: number; assistants: number }) {
  const crons = so.crons + (await eraseCrons(backends, userId));
  const removed = await new AgentAssistants(backends.dynamo, backends.config.CHECKPOINT_TABLE).remove(userId);
  return { crons, assistants: so.assistants + removed };
}

/** The user's crons: each schedule first (so none fires for a user who is gone), then its record. */
async function eraseCrons({ dynamo, config, cronScheduler }: Backends, userId: string): Promise<number> {
  const store = new AgentCrons(dynamo, config.CHECKPOINT_TABLE);
  const crons = await store.list(userId);
  // A schedule names its user: with no scheduler to remove it by, the erasure is not complete.
  if (crons.length > 0 && !cronScheduler)
    throw new AppError(503, "crons_unavailable", "this function cannot remove the user's cron schedules");
  for (const cron of crons) {
    await cronScheduler!.remove(cron.cronId);
    await store.remove(userId, cron.cronId);
  }
  return crons.length;
}

function sumCounts(counts: Array<ErasedCounts | undefined>): Partial<ErasedCounts> {
  if (counts.some((c) => c === undefined)) return {};
  const total = (key: keyof ErasedCounts) => counts.reduce((n, c) => n + c![key], 0);
  return {
    transcripts: total("transcripts"),
    traces: total("traces"),
    memories: total("memories"),
    user_context: total("user_context"),
    store_items: total("store_items"),
  };
}
