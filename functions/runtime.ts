// The composition root shared by the handlers (not a handler itself): it builds the
// backends from configuration once per Lambda container, lazily, so a handler only
// pays for what it uses.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { DynamoDBSaver } from "../graph/checkpoint";
import { buildChatGraph } from "../graph/chat/graph";
import { ChatService } from "../graph/chat/service";
import { loadConfig, required, type Config } from "../shared/config";
import { createChatModel } from "../shared/models";
import type { ConversationStore } from "../shared/stores/conversations";
import { PostgrestConversationStore } from "../shared/stores/postgrest-conversations";
import { supabaseRest } from "../shared/stores/postgrest";

/** What the handlers run against; the local stack builds the same from its stand-ins. */
export interface Backends {
  config: Config;
  dynamo: DynamoDBClient;
  conversations: ConversationStore;
}

export interface ChatRuntime extends Backends {
  chat: ChatService;
  /** one line per backend in use, for the startup log */
  descriptions: string[];
}

export async function buildChatRuntime(
  backends: Backends,
  tools: StructuredToolInterface[] = [],
): Promise<ChatRuntime> {
  const { config, dynamo, conversations } = backends;
  const model = await createChatModel(config);
  const checkpointer = new DynamoDBSaver({
    client: dynamo,
    tableName: config.CHECKPOINT_TABLE,
    ttlDays: config.CHECKPOINT_TTL_DAYS,
  });
  const graph = buildChatGraph({ model: model.value, tools, checkpointer });
  return {
    ...backends,
    chat: new ChatService({ graph, conversations, recursionLimit: config.AGENT_RECURSION_LIMIT }),
    descriptions: [model.description],
  };
}

let lambdaBackends: Backends | undefined;

/** Backends for Lambda: DynamoDB from the execution role, Supabase over PostgREST. */
export function awsBackends(): Backends {
  if (lambdaBackends === undefined) {
    const config = loadConfig();
    const rest = supabaseRest(required(config, "SUPABASE_URL"), required(config, "SUPABASE_SERVICE_ROLE_KEY"));
    lambdaBackends = { config, dynamo: new DynamoDBClient({}), conversations: new PostgrestConversationStore(rest) };
  }
  return lambdaBackends;
}

/** Memoises an async factory: a container builds its runtime once, and retries after a failure. */
export function once<T>(factory: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= factory().catch((err) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
