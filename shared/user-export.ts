import pLimit from "p-limit";
import type { Backends } from "./backends";
import { storeUnavailable } from "./errors";
import { FileRecords } from "./files/records";
import { publicFile } from "./files/service";
import { AgentAssistants } from "./stores/agent-assistants";
import { AgentCrons } from "./stores/agent-crons";
import { runJson, threadJson } from "./stores/agent-json";
import { AgentRuns } from "./stores/agent-runs";
import { AgentThreads } from "./stores/agent-threads";
import { SessionOwners } from "./stores/session-owners";
import type { ExportedUserData } from "./stores/user-data";
import { UserUsage } from "./stores/user-usage";

/**
 * Everything held about a user, as one JSON document (GET /api/me/export; GDPR articles 15 and
 * 20): every session the state table or Supabase knows, with its settings, messages, traces and
 * files (a download link for each ready one); memories with their history (a superseded memory
 * names the one that replaced it) and the marks of deleted ones; the Agent Server store's items (the current memories under their
 * keys; its own items under agent_server); the user context; Agent Server assistants, and threads with their runs;
 * today's usage.
 */
export async function exportUser(backends: Backends, userId: string) {
  const { config, dynamo, userData, files } = backends;
  const owners = new SessionOwners(dynamo, config.CHECKPOINT_TABLE);
  const threads = new AgentThreads(dynamo, config.CHECKPOINT_TABLE);
  const runs = new AgentRuns(dynamo, config.CHECKPOINT_TABLE);
  const records = new FileRecords(dynamo, config.CHECKPOINT_TABLE);
  const [owned, threadRecords, assistants, crons, db, usage] = await Promise.all([
    owners.sessionsOf(userId),
    threads.list(userId),
    new AgentAssistants(dynamo, config.CHECKPOINT_TABLE).list(userId),
    new AgentCrons(dynamo, config.CHECKPOINT_TABLE).list(userId),
    userData?.export(userId).catch((err) => {
      throw storeUnavailable(err);
    }),
    new UserUsage(dynamo, config.CHECKPOINT_TABLE, config.USER_QUOTAS).today(userId),
  ]);
  const transcripts = new Map((db?.sessions ?? []).map((s) => [s.session_id, s]));
  const sessionIds = [...new Set([...owned, ...transcripts.keys()])];
  const settings = await owners.sessions(owned);
  const ttl = config.FILES_URL_TTL_SECONDS;

  // A few sessions' reads at a time: a user with hundreds of sessions does not send hundreds at once.
  const limit = pLimit(8);
  const sessions = await Promise.all(
    sessionIds.map(async (sessionId) =>
      limit(async () => {
        const record = settings.get(sessionId);
        const transcript = transcripts.get(sessionId);
        const sessionFiles = (await records.list(sessionId)).filter((f) => f.user_id === userId);
        return {
          session_id: sessionId,
          project_id: record?.projectId ?? transcript?.project_id ?? null,
          name: transcript?.name ?? null,
          ...(record ? { settings: record.settings } : {}),
          created_at: transcript?.created_at ?? null,
          updated_at: transcript?.updated_at ?? null,
          messages: transcript?.messages ?? [],
          traces: transcript?.traces ?? {},
          files: await Promise.all(
            sessionFiles.map(async (f) => ({
              ...publicFile(f),
              ...(files && f.status === "ready" ? { download_url: await files.downloadUrl(f.key, f.name, ttl) } : {}),
            })),
          ),
        };
      }),
    ),
  );

  const memories = db?.memories ?? [];
  return {
    user_id: userId,
    exported_at: new Date().toISOString(),
    ...(files ? { download_links_expire_at: new Date(Date.now() + ttl * 1000).toISOString() } : {}),
    sessions,
    memories,
    store_items: storeItemsOf(memories),
    // what remains of memories the user deleted: a hash and an embedding of their words, for 14 days
    forgotten_memories: db?.forgotten_memories ?? [],
    user_context: db?.user_context ?? null,
    agent_server: {
      assistants,
      crons: crons.map(
        ({ cronId, threadId, assistantId, schedule, payload, metadata, enabled, createdAt, updatedAt, endTime }) => ({
          cron_id: cronId,
          thread_id: threadId,
          assistant_id: assistantId,
          schedule,
          payload,
          metadata,
          enabled,
          end_time: endTime ?? null,
          created_at: createdAt,
          updated_at: updatedAt,
        }),
      ),
      // the store's own items, any namespace but the memories' (those are store_items above)
      store_items: db?.store_items ?? [],
      // As the Agent Server API shows them, each with its runs.
      threads: await Promise.all(
        threadRecords.map(async (thread) =>
          limit(async () => ({
            ...threadJson(thread),
            // The user's own: an id whose session expired may be another user's thread now.
            runs: (await runs.list(thread.threadId))
              .filter((run) => run.userId === userId)
              .map((run) => ({ ...runJson(run), kwargs: run.kwargs ?? null })),
          })),
        ),
      ),
    },
    usage_today: { day: usage.day, turns: usage.turns, tokens: usage.tokens },
  };
}

/** The Agent Server store's view of the memories: the current ones, under the client's key or their id. */
function storeItemsOf(memories: ExportedUserData["memories"]) {
  return memories
    .filter((m) => m.superseded_by === null)
    .map((m) => ({
      key: typeof m.metadata.store_key === "string" ? m.metadata.store_key : m.id,
      project_id: m.project_id,
      memory_id: m.id,
    }));
}
