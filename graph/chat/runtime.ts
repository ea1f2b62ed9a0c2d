import type { Backends } from "../../shared/backends";
import type { Logger } from "../../shared/logger";
import { createChatModel } from "../../shared/models/chat-model";
import { createEmbeddings } from "../../shared/models/embeddings";
import { SessionOwners } from "../../shared/stores/session-owners";
import { UserUsage } from "../../shared/stores/user-usage";
import { DynamoDBSaver } from "../checkpoint";
import { defaultContextBudget } from "./context";
import { buildChatGraph, type ChatGraph } from "./graph";
import { promptCachePolicy } from "./prompt-cache";
import { ChatService } from "./service";
import { settingsOf } from "../tools/groups";
import { chatTools } from "../tools/registry";
import { dataFileTools, describeDataFilesForPrompt } from "../tools/data-files";
import type { DataFileSummary } from "../../shared/stores/session-owners";
import { FileRecords } from "../../shared/files/records";
import { fileService } from "../../shared/files/service";
import { sqlLimitsOf } from "../../shared/files/sql-errors";
import { noDataEngine } from "../../shared/files/data-engine";

export interface ChatRuntime extends Backends {
  chat: ChatService;
  /** the compiled chat graph, for reading thread state (the Agent Server API) */
  graph: ChatGraph;
  /** one line per backend in use, for the startup log */
  descriptions: string[];
}

/** Wires the chat agent onto the backends: model, tools (when a store exists), checkpointer, owners. */
export async function buildChatRuntime(backends: Backends, logger?: Logger): Promise<ChatRuntime> {
  const { config, dynamo, conversations, store, extractionQueue } = backends;
  const [model, embeddings, namer] = await Promise.all([
    createChatModel(config),
    createEmbeddings(config),
    config.BEDROCK_NAMING_MODEL_ID ? createChatModel(config, undefined, config.BEDROCK_NAMING_MODEL_ID) : undefined,
  ]);
  const onError = (tool: string, error: unknown) => logger?.error("tool failed", { tool, error });
  const dataFiles = backends.files && {
    records: new FileRecords(dynamo, config.CHECKPOINT_TABLE),
    engine: backends.dataEngine ?? noDataEngine,
    limits: sqlLimitsOf(config),
    onError,
  };
  // The registry's tools these backends can run (without a store, none), and the data-file tools
  // when the deployment has an attachments bucket.
  const tools = [
    ...chatTools({ store, embeddings: embeddings.value, minMemoryScore: config.MEMORY_MIN_SCORE, onError }),
    ...(dataFiles ? dataFileTools(dataFiles) : []),
  ];
  const checkpointer = new DynamoDBSaver({
    client: dynamo,
    tableName: config.CHECKPOINT_TABLE,
    ttlDays: config.CHECKPOINT_TTL_DAYS,
  });
  const graph = buildChatGraph({
    model: model.value,
    // An assistant may name the deployment's lighter model instead (its configurable.model).
    ...(namer && config.BEDROCK_NAMING_MODEL_ID ? { models: { [config.BEDROCK_NAMING_MODEL_ID]: namer.value } } : {}),
    tools,
    checkpointer,
    toolCalling: !config.MODELS_WITHOUT_TOOLS.includes(config.BEDROCK_MODEL_ID ?? ""),
    ...(backends.files ? { readImage: (ref) => backends.files!.read(ref.key) } : {}),
    context: {
      budget: config.CONTEXT_TOKEN_BUDGET ?? defaultContextBudget(config.BEDROCK_MODEL_ID),
      // The light model that names sessions also keeps the running summary.
      summarizer: (namer ?? model).value,
      cache: promptCachePolicy(config.BEDROCK_MODEL_ID),
      onSummaryError: (error) => logger?.error("summary update failed", { error, metric: "SummaryFailed" }),
    },
    // The data files come with the session's owner record, which the turn's lease update returns
    // (ChatService passes them as `data_files`): no read of the session's files per turn.
    ...(dataFiles
      ? {
          promptContext: async (c) =>
            settingsOf(c).files
              ? describeDataFilesForPrompt((c?.configurable?.data_files as DataFileSummary[] | undefined) ?? [])
              : undefined,
        }
      : {}),
  });
  // Inline images become files of the session, stored as uploads are (shared/files/service.ts).
  const imageFiles = fileService(backends);
  const owners = new SessionOwners(
    dynamo,
    config.CHECKPOINT_TABLE,
    config.CHECKPOINT_TTL_DAYS,
    config.SESSION_LEASE_MS,
  );
  return {
    ...backends,
    graph,
    chat: new ChatService({
      graph,
      owners,
      queueWaitMs: config.SESSION_QUEUE_WAIT_MS,
      namingModel: (namer ?? model).value,
      conversations,
      recursionLimit: config.AGENT_RECURSION_LIMIT,
      extractionQueue,
      projectSettings: config.PROJECT_SETTINGS,
      ...(dataFiles ? { files: dataFiles.records } : {}),
      ...(imageFiles
        ? { storeImages: (userId, sessionId, images) => imageFiles.storeImages(userId, sessionId, images) }
        : {}),
      removeCheckpointsSince: (threadId, since) => checkpointer.deleteCheckpointsSince(threadId, since),
      onUndoFailure: (error) =>
        logger?.error("failed turn left in the graph state", { error, metric: "TurnUndoFailed" }),
      onReleaseFailure: (error) =>
        logger?.warn("session lease not let go: it expires on its own", { error, metric: "LeaseReleaseFailed" }),
      onExtractionPublishFailure: (error) =>
        logger?.error("extraction hand-off failed", { error, metric: "ExtractionPublishFailed" }),
      usage: new UserUsage(dynamo, config.CHECKPOINT_TABLE, config.USER_QUOTAS),
      onUsageFailure: (error) => logger?.error("token count failed", { error, metric: "UsageCountFailed" }),
    }),
    descriptions: [
      model.description,
      embeddings.description,
      tools.length > 0
        ? `tools: ${tools.map((t) => t.name).join(", ")}${store ? "" : " (no Supabase configured: no memory or knowledge base)"}`
        : "tools: none (no Supabase configured: no memory or knowledge base)",
    ],
  };
}
