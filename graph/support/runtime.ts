import type { Backends } from "../../shared/backends";
import { ConfigError } from "../../shared/config";
import { idempotency } from "../../shared/idempotency";
import { IntercomClient } from "../../shared/intercom/client";
import { createChatModel } from "../../shared/models/chat-model";
import { createEmbeddings } from "../../shared/models/embeddings";
import { secretSource } from "../../shared/secrets";
import { OnceMarkers } from "../../shared/stores/once-markers";
import { SessionLeases } from "../../shared/stores/session-lease";
import { DynamoDBSaver } from "../checkpoint";
import { buildSupportGraph } from "./graph";
import { McpTools } from "./mcp-tools";
import { SupportService } from "./service";

/** Wires the support worker: Intercom client, model, knowledge base, checkpointer, once-markers. */
export async function buildSupportRuntime(backends: Backends, fetchImpl?: typeof fetch) {
  const { config, dynamo, store } = backends;
  if (!config.INTERCOM_ADMIN_ID) throw new ConfigError("Missing configuration: INTERCOM_ADMIN_ID must be set");
  const token = secretSource(
    "INTERCOM_ACCESS_TOKEN",
    config.INTERCOM_ACCESS_TOKEN,
    config.INTERCOM_ACCESS_TOKEN_SECRET_ARN,
  );
  const [model, embeddings] = await Promise.all([createChatModel(config), createEmbeddings(config)]);
  const graph = buildSupportGraph({
    model: model.value,
    intercom: new IntercomClient({ baseUrl: config.INTERCOM_API_URL, token, fetch: fetchImpl }),
    store,
    ...(config.SUPPORT_MCP_URL ? { mcp: new McpTools(config.SUPPORT_MCP_URL) } : {}),
    embeddings: embeddings.value,
    answered: new OnceMarkers(dynamo, config.IDEMPOTENCY_TABLE),
    adminId: config.INTERCOM_ADMIN_ID,
    snoozeMinutes: config.SUPPORT_SNOOZE_MINUTES,
    checkpointer: new DynamoDBSaver({
      client: dynamo,
      tableName: config.CHECKPOINT_TABLE,
      ttlDays: config.CHECKPOINT_TTL_DAYS,
    }),
  });
  return {
    graph,
    support: new SupportService({
      graph,
      leases: new SessionLeases(dynamo, config.CHECKPOINT_TABLE),
      maxHops: config.SUPPORT_MAX_HOPS,
    }),
    idempotency: idempotency(dynamo, config.IDEMPOTENCY_TABLE, "[conversation_id, part_id]"),
  };
}

export type SupportRuntime = Awaited<ReturnType<typeof buildSupportRuntime>>;
