import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { Config } from "../config";
import { bedrockClient, type Described, langchainAws } from "./bedrock-client";
import { REPLY_MAX_TOKENS } from "./reply-limit";

export async function createChatModel(
  config: Config,
  client?: BedrockRuntimeClient,
  modelId = config.BEDROCK_MODEL_ID,
): Promise<Described<BaseChatModel>> {
  if (modelId) {
    const { ChatBedrockConverse } = await langchainAws();
    return {
      value: new ChatBedrockConverse({
        model: modelId,
        client: client ?? bedrockClient(config),
        region: config.BEDROCK_REGION ?? process.env.AWS_REGION,
        temperature: 0.2,
        maxTokens: REPLY_MAX_TOKENS,
      }),
      description: `model: Bedrock ${modelId}`,
    };
  }
  // Imported only here: a deployment with Bedrock never loads the stand-in (nor image-size, its reader of pictures).
  const { OfflineChatModel } = await import("./offline-chat-model");
  return {
    value: new OfflineChatModel({ streamDelayMs: config.OFFLINE_STREAM_DELAY_MS }),
    description: "model: offline rule-based stand-in, not a language model (set BEDROCK_MODEL_ID for Bedrock)",
  };
}
