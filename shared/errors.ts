/**
 * An error with an HTTP status and a stable code, shaped for clients as
 * `{"error":{"code","message"}}`. Anything else that escapes a handler is a 500.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: {
      cause?: unknown;
      /** more fields of the error object, beside code and message (a quota's limit) */
      details?: Record<string, unknown>;
      /** headers the answer carries (Retry-After) */
      headers?: Record<string, string>;
    },
  ) {
    super(message, options);
    this.name = "AppError";
    this.details = options?.details;
    this.headers = options?.headers;
  }

  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

export const badRequest = (code: string, message: string) => new AppError(400, code, message);
export const payloadTooLarge = (limit: number) =>
  new AppError(413, "body_too_large", `request body must be at most ${limit} bytes`);
export const unauthorized = (message = "authentication required") => new AppError(401, "unauthorized", message);
export const forbidden = (message: string) => new AppError(403, "forbidden", message);
/** Also what another user's session looks like: it does not exist for them. */
export const notFound = (code: string, message: string) => new AppError(404, code, message);

export const storeUnavailable = (cause: unknown) =>
  new AppError(503, "store_unavailable", "the conversation history could not be read or saved", { cause });

/** Unknown, or another user's: both look the same to the caller. */
export const sessionNotFound = () => notFound("session_not_found", "no such session");

/** Names a throttled AWS service answers with (DynamoDB's, S3's, the generic one), whatever its status. */
const THROTTLED = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "SlowDown",
]);
/** Node's codes for a connection that failed or dropped, and the SDK's name for a request it timed out. */
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * What an error answers the caller with. An AppError is itself. A dependency that failed after
 * the SDK's own retries (an AWS service throttling or at fault, a connection refused, dropped or
 * timed out) is a 503 the caller may retry; the function running out of time (middy's early
 * timeout) a 504; anything else a bare 500. Only the code and a fixed message reach the caller:
 * the error is kept as the cause, for the log.
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as { name?: string; code?: string; $fault?: string; $metadata?: unknown; cause?: unknown };
  if (e.name === "TimeoutError" && (e.cause as { package?: string } | undefined)?.package === "@middy/core")
    return new AppError(504, "request_timeout", "the request did not finish in the time it has; try again", {
      cause: err,
    });
  const awsFault = e.$metadata !== undefined && (e.$fault === "server" || THROTTLED.has(e.name ?? ""));
  if (awsFault || e.name === "TimeoutError" || NETWORK.has(e.code ?? ""))
    return new AppError(
      503,
      "service_unavailable",
      "a service this request needs is busy or unavailable; try again shortly",
      {
        cause: err,
      },
    );
  return new AppError(500, "internal_error", "internal error", { cause: err });
}
