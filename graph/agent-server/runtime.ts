import type { Backends } from "../../shared/backends";
import { deferredRuntime } from "../../shared/deferred";
import type { Logger } from "../../shared/logger";
import { AgentRuns } from "../../shared/stores/agent-runs";
import { createEmbeddings } from "../../shared/models";
import type { RunDeps } from "./runs";
import { MemoryItems } from "./store";
import { ThreadService } from "./threads";

/**
 * The Agent Server API's handlers run on the chat runtime (the same ChatService and graph as
 * /api/chat), loaded with the first request rather than at init (shared/deferred.ts).
 */
export const deferredAgentServer = (logger: Logger, backends: () => Promise<Backends>) =>
  deferredRuntime(
    () => import("../chat/runtime"),
    async ({ buildChatRuntime }) => {
      const runtime = await buildChatRuntime(await backends(), logger);
      const threads = new ThreadService(runtime, runtime.graph);
      const runs = new AgentRuns(runtime.dynamo, runtime.config.CHECKPOINT_TABLE);
      const runDeps: RunDeps = {
        chat: runtime.chat,
        runs,
        requestCancel: (threadId, userId, action) => threads.owners.requestCancel(threadId, userId, action),
        maxMessageBytes: runtime.config.MAX_MESSAGE_BYTES,
        deleteThread: (threadId, userId) => threads.delete(userId, threadId),
      };
      const embeddings = await createEmbeddings(runtime.config);
      return { ...runtime, threads, runs, runDeps, items: new MemoryItems(runtime.store, embeddings.value) };
    },
  );
export type AgentServer = Awaited<ReturnType<ReturnType<typeof deferredAgentServer>>>;
