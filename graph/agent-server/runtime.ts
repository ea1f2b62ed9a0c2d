import type { Backends } from "../../shared/backends";
import { deferredRuntime } from "../../shared/deferred";
import type { Logger } from "../../shared/logger";
import { AgentCrons } from "../../shared/stores/agent-crons";
import { CronService } from "./crons";
import { RunEventLog } from "../../shared/stores/run-events";
import { parseWebhookHosts } from "../../shared/webhooks";
import { createEmbeddings } from "../../shared/models/embeddings";
import { AgentAssistants } from "../../shared/stores/agent-assistants";
import { AssistantService } from "./assistants";
import type { RunDeps } from "./runs";
import { MemoryItems } from "./store";
import { StoreApi } from "./store-api";
import { StoreItems } from "./store-items";
import { ThreadService } from "./threads";

/**
 * The Agent Server API's handlers run on the chat runtime (the same ChatService and graph as
 * /api/chat), loaded with the first request rather than at init (shared/deferred.ts).
 */
export const deferredAgentServer = (logger: Logger, backends: () => Promise<Backends>) =>
  deferredRuntime(
    () => import("../chat/runtime"),
    async ({ buildChatRuntime }) => {
      const wired = await backends();
      const runtime = await buildChatRuntime(wired, logger);
      const threads = new ThreadService(runtime, runtime.graph);
      const { config } = runtime;
      const assistants = new AssistantService(
        new AgentAssistants(runtime.dynamo, config.CHECKPOINT_TABLE),
        [config.BEDROCK_MODEL_ID, config.BEDROCK_NAMING_MODEL_ID].filter((m): m is string => m !== undefined),
      );
      const { runs } = threads;
      const runDeps: RunDeps = {
        chat: runtime.chat,
        runs,
        threads: threads.records,
        readState: (threadId) => runtime.graph.getState({ configurable: { thread_id: threadId } }),
        assistant: (userId, assistantId) => assistants.forRun(userId, assistantId),
        requestCancel: (threadId, userId, action, runId) =>
          threads.owners.requestCancel(threadId, userId, action, runId),
        maxMessageBytes: runtime.config.MAX_MESSAGE_BYTES,
        deleteThread: (threadId, userId) => threads.delete(userId, threadId),
        onServerError: (error) => logger.error("run failed", { error }),
        webhookHosts: parseWebhookHosts(config.WEBHOOK_HOSTS),
        ...(wired.webhooksQueue ? { webhooks: wired.webhooksQueue } : {}),
      };
      const embeddings = await createEmbeddings(runtime.config);
      const items = new StoreApi(
        new MemoryItems(runtime.store, embeddings.value),
        new StoreItems(runtime.store, embeddings.value),
      );
      const events = new RunEventLog(runtime.dynamo, config.CHECKPOINT_TABLE, {
        ttlSeconds: config.RUN_EVENTS_TTL_HOURS * 3600,
      });
      const background = { threads, runs, runDeps, events, runsQueue: wired.runsQueue };
      const crons = new AgentCrons(runtime.dynamo, config.CHECKPOINT_TABLE);
      const scheduler = wired.cronScheduler;
      const cronDeps = { ...background, crons, ...(scheduler ? { scheduler } : {}) };
      return { ...runtime, ...cronDeps, assistants, items, cronService: new CronService(cronDeps) };
    },
  );
export type AgentServer = Awaited<ReturnType<ReturnType<typeof deferredAgentServer>>>;
