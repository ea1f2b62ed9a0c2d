import type { Backends } from "../../shared/backends";
import { ConfigError } from "../../shared/config";
import { idempotency } from "../../shared/idempotency";
import { createChatModel } from "../../shared/models/chat-model";
import { createEmbeddings } from "../../shared/models/embeddings";
import { createLogger } from "../../shared/logger";
import { UserUsage } from "../../shared/stores/user-usage";

const logger = createLogger("memory-extraction");
import { MemoryExtractor } from "./extractor";

/** Wires the extraction consumer onto the backends: model, embeddings, store, idempotency records. */
export async function buildExtractionRuntime(backends: Backends) {
  const { config, dynamo, store } = backends;
  if (!store) throw new ConfigError("memory extraction needs Supabase: SUPABASE_URL is not set");
  const [model, embeddings] = await Promise.all([createChatModel(config), createEmbeddings(config)]);
  const usage = new UserUsage(dynamo, config.CHECKPOINT_TABLE, config.USER_QUOTAS);
  return {
    extractor: new MemoryExtractor({
      model: model.value,
      store,
      embeddings: embeddings.value,
      duplicateThreshold: config.MEMORY_DUPLICATE_THRESHOLD,
      ...(backends.userData
        ? { sessionErased: (id: string, turnAt?: string) => backends.userData!.sessionErased(id, turnAt) }
        : {}),
      // The user's cost, as their turns' is: counted where a token limit applies (one UpdateItem).
      // Bookkeeping, never the memory's failure (the chat turn treats it so too): reported, not thrown.
      countTokens: (turn, tokens) =>
        usage
          .addSpent(turn.user_id, turn.project_id, tokens)
          .catch((err: unknown) => logger.warn("extraction tokens not counted", { error: String(err) })),
    }),
    idempotency: idempotency(dynamo, config.IDEMPOTENCY_TABLE, "turn_id"),
  };
}

export type ExtractionRuntime = Awaited<ReturnType<typeof buildExtractionRuntime>>;
