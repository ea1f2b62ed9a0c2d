import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { Embeddings } from "@langchain/core/embeddings";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { Config } from "../config";
import { HashingEmbeddings } from "./hashing-embeddings";
import { OfflineChatModel } from "./offline-chat-model";

export interface Described<T> {
  value: T;
  /** one line for the startup log: which backend is in use */
  description: string;
}

/**
 * Bedrock's runtime client with adaptive retries: throttling (429) and 5xx are retried
 * with backoff by the SDK before an error reaches the agent.
 */
export function bedrockClient(config: Config): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: config.BEDROCK_REGION ?? process.env.AWS_REGION,
    maxAttempts: 5,
    retryMode: "adaptive",
  });
}

export async function createChatModel(
  config: Config,
  client?: BedrockRuntimeClient,
  modelId = config.BEDROCK_MODEL_ID,
): Promise<Described<BaseChatModel>> {
  if (modelId) {
    // Loaded lazily: the offline path (and its cold start) never pays for @langchain/aws.
    const { ChatBedrockConverse } = await import("@langchain/aws");
    return {
      value: new ChatBedrockConverse({
        model: modelId,
        client: client ?? bedrockClient(config),
        region: config.BEDROCK_REGION ?? process.env.AWS_REGION,
        temperature: 0.2,
        maxTokens: 2048,
      }),
      description: `model: Bedrock ${modelId}`,
    };
  }
  return {
    value: new OfflineChatModel({ streamDelayMs: config.OFFLINE_STREAM_DELAY_MS }),
    description: "model: offline rule-based stand-in, not a language model (set BEDROCK_MODEL_ID for Bedrock)",
  };
}

export async function createEmbeddings(config: Config, client?: BedrockRuntimeClient): Promise<Described<Embeddings>> {
  if (config.BEDROCK_EMBEDDING_MODEL_ID) {
    const { BedrockEmbeddings } = await import("@langchain/aws");
    return {
      value: new BedrockEmbeddings({
        model: config.BEDROCK_EMBEDDING_MODEL_ID,
        client: client ?? bedrockClient(config),
        region: config.BEDROCK_REGION ?? process.env.AWS_REGION,
        dimensions: config.EMBEDDING_DIM,
      }),
      description: `embeddings: Bedrock ${config.BEDROCK_EMBEDDING_MODEL_ID} (${config.EMBEDDING_DIM} dimensions)`,
    };
  }
  return {
    value: new HashingEmbeddings(config.EMBEDDING_DIM),
    description: `embeddings: hashing stand-in, lexical only (${config.EMBEDDING_DIM} dimensions; set BEDROCK_EMBEDDING_MODEL_ID for Bedrock)`,
  };
}
