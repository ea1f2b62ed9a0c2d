import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
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
 *
 * Over HTTP/1.1 with keep-alive, through one handler that every Bedrock client of the container
 * shares (the chat model's, the session namer's, the embeddings'), so their calls reuse its
 * connections. The SDK's default for this client is HTTP/2 with a session of its own for every
 * request (`disableConcurrentStreams`, for its bidirectional streams, which the agents never
 * use): each model call and each embedding opened a new TLS connection. Converse,
 * ConverseStream and InvokeModel work over either. It also leaves Node's http2 module out of the
 * bundles (bundle trim `bedrock-http1`).
 */
export function bedrockClient(config: Config): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: config.BEDROCK_REGION ?? process.env.AWS_REGION,
    maxAttempts: 5,
    retryMode: "adaptive",
    requestHandler: sharedHandler(),
  });
}

let handler: NodeHttpHandler | undefined;
/**
 * A kept-alive socket that the network dropped without a word (after the container was frozen)
 * would otherwise hang its call until the function's timeout: a socket silent for longer than
 * the slowest non-streamed reply (a 2,048-token Converse) fails with a TimeoutError, which the
 * SDK retries on a new connection. Passing a handler also sets aside the SDK's defaults mode
 * timeouts, so the connection's is set here.
 */
const sharedHandler = () => (handler ??= new NodeHttpHandler({ connectionTimeout: 3_000, socketTimeout: 90_000 }));

/**
 * @langchain/aws's model classes, loaded on the first use: the offline stand-ins (and their cold
 * start) never pay for them, and a Bedrock deployment pays on its first turn, where the cold-start
 * bench counts it (shared/deferred.ts).
 */
export const langchainAws = deferredModule(() => import("./langchain-aws"));
