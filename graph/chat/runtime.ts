import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Backends } from "../../shared/backends";
import { createChatModel } from "../../shared/models";
import { DynamoDBSaver } from "../checkpoint";
import { buildChatGraph } from "./graph";
import { ChatService } from "./service";

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
