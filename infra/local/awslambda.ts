import type { Writable } from "node:stream";

/**
 * A stand-in for the Lambda runtime's `awslambda` global, so streaming handlers run locally
 * unchanged. `streamifyResponse` marks a handler as streaming (the local API Gateway then
 * calls it with a response stream); `HttpResponseStream.from` attaches the status and headers
 * the runtime would send as the response's prelude.
 */
export const STREAMING = Symbol.for("local.awslambda.streaming");

export interface PreludeWritable extends Writable {
  setPrelude?(prelude: { statusCode: number; headers?: Record<string, string> }): void;
}

const g = globalThis as unknown as { awslambda?: unknown };
g.awslambda ??= {
  streamifyResponse: <T extends object>(handler: T): T => Object.assign(handler, { [STREAMING]: true }),
  HttpResponseStream: {
    from(stream: PreludeWritable, prelude: { statusCode: number; headers?: Record<string, string> }) {
      stream.setPrelude?.(prelude);
      return stream;
    },
  },
};

export const isStreaming = (handler: unknown) => Boolean((handler as Record<symbol, unknown>)[STREAMING]);
