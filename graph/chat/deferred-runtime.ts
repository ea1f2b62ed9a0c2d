import type { Backends } from "../../shared/backends";
import { deferredRuntime } from "../../shared/deferred";
import type { Logger } from "../../shared/logger";

/**
 * The chat agent for the chat handlers: its modules (LangGraph, LangChain, Bedrock) load with
 * the first turn, not at init (shared/deferred.ts), and it is built on whatever backends the
 * handler was wired with (Lambda's or the local stack's).
 */
export const deferredChatRuntime = (logger: Logger, backends: () => Promise<Backends>) =>
  deferredRuntime(
    () => import("./runtime"),
    async ({ buildChatRuntime }) => buildChatRuntime(await backends(), logger),
  );
