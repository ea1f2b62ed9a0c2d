import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { Embeddings } from "@langchain/core/embeddings";
import type { Config } from "../config";
import { bedrockClient, type Described, langchainAws } from "./bedrock-client";

// Apart from the chat model (./chat-model.ts): what only embeds (a knowledge search, ingestion) does
// not load the offline model's or LangChain's chat model classes.

export async function createEmbeddings(config: Config, client?: BedrockRuntimeClient): Promise<Described<Embeddings>> {
  if (config.BEDROCK_EMBEDDING_MODEL_ID) {
    const { BedrockEmbeddings } = await langchainAws();
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
  // Imported only here: a deployment with Bedrock never loads the stand-in.
  const { HashingEmbeddings } = await import("./hashing-embeddings");
  return {
    value: new HashingEmbeddings(config.EMBEDDING_DIM),
    description: `embeddings: hashing stand-in, lexical only (${config.EMBEDDING_DIM} dimensions; set BEDROCK_EMBEDDING_MODEL_ID for Bedrock)`,
  };
}
