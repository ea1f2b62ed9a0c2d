import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildChatRuntime } from "../../graph/chat/runtime";
import { FolderFileObjects } from "../../infra/local/uploads";
import type { Backends } from "../../shared/backends";
import { loadConfig } from "../../shared/config";
import { inProcessEngine } from "../../shared/files/data-core";
import { objectKey } from "../../shared/files/keys";
import { fileService } from "../../shared/files/service";
import type { backendsHarness } from "./stack";

/**
 * The chat runtime as Lambda and the local stack build it (graph/chat/runtime.ts), on a fresh
 * table of the harness and an attachments folder with a data engine: what a turn reads, wherever
 * it is wired, is what the round-trip test and the turn-overhead bench count.
 */
export async function productionChat(
  harness: Awaited<ReturnType<typeof backendsHarness>>,
  /** settings beside the defaults, as a deployment's environment names them (USER_QUOTAS, ...) */
  env: Record<string, string> = {},
) {
  const { tableName } = await harness.stateTables();
  const dir = mkdtempSync(join(tmpdir(), "production-chat-"));
  const files = new FolderFileObjects(dir, () => "http://localhost", "/_local/files/", { writeOnce: true });
  const backends: Backends = {
    config: loadConfig({
      CHECKPOINT_TABLE: tableName,
      OFFLINE_STREAM_DELAY_MS: "0",
      AGENT_RECURSION_LIMIT: "12",
      ...env,
    }),
    dynamo: harness.dynamo.client,
    conversations: harness.conversations,
    store: harness.store,
    files,
    dataEngine: inProcessEngine((key) => files.read(key)),
  };
  const runtime = await buildChatRuntime(backends);
  /** Uploads a CSV to the session as a client does (create, the bytes, complete): a ready data file. */
  const attachCsv = async (userId: string, sessionId: string, name: string, csv: string) => {
    const service = fileService(backends)!;
    const bytes = new TextEncoder().encode(csv);
    const made = await service.create(userId, sessionId, { name, media_type: "text/csv", bytes: bytes.length });
    await files.write(objectKey(userId, sessionId, made.file_id), bytes);
    return service.complete(userId, sessionId, made.file_id);
  };
  return {
    backends,
    runtime,
    chat: runtime.chat,
    tableName,
    attachCsv,
    files: fileService(backends)!,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
