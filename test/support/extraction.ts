import { MemoryExtractor } from "../../graph/memory/extractor";
import { startLocalPostgres } from "../../infra/local/postgres";
import { loadConfig } from "../../shared/config";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { OfflineChatModel } from "../../shared/models/offline-chat-model";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";

/**
 * Memory extraction as the consumer runs it, on PGlite with the migrations, with the offline
 * stand-in model and the hashing embedder (stand-ins for Bedrock) and the default threshold.
 */
export async function extractionHarness() {
  const db = await startLocalPostgres();
  const store = new RpcAgentStore(sqlRpc(db));
  const embeddings = new HashingEmbeddings(1024);
  const extractor = new MemoryExtractor({
    model: new OfflineChatModel({}),
    store,
    embeddings,
    duplicateThreshold: loadConfig({}).MEMORY_DUPLICATE_THRESHOLD,
  });
  return { db, store, embeddings, extractor };
}
