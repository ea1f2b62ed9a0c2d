import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { Config } from "../config";
import { deferredModule } from "../deferred";

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

/**
 * @langchain/aws's model classes, loaded on the first use: the offline stand-ins (and their cold
 * start) never pay for them, and a Bedrock deployment pays on its first turn, where the cold-start
 * bench counts it (shared/deferred.ts).
 */
export const langchainAws = deferredModule(() => import("./langchain-aws"));
