import { deferredRuntime } from "../../shared/deferred";
import type { Logger } from "../../shared/logger";

/**
 * The chat agent on AWS for the chat handlers: its modules (LangGraph, LangChain, Bedrock,
 * DynamoDB, SQS, Supabase) load with the first turn, not at init (shared/deferred.ts).
 */
export const awsChatRuntime = (logger: Logger) =>
  deferredRuntime(
    () => Promise.all([import("./runtime"), import("../../shared/backends")]),
    async ([{ buildChatRuntime }, { awsBackends }]) => buildChatRuntime(await awsBackends(), logger),
  );
