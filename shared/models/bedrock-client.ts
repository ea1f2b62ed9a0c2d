import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { Config } from "../config";

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
