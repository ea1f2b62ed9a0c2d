/**
 * An error with an HTTP status and a stable code, shaped for clients as
 * `{"error":{"code","message"}}`. Anything else that escapes a handler is answered as
 * asAppError says.
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
/** Node's (and its fetch's) codes for a connection that failed, dropped or timed out. */
const NETWORK = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
]);
/** The statuses a service answers when it is down or overloaded for now, not misconfigured (a 502 may be either). */
const PASSING = new Set([500, 503, 504]);

/**
 * What an error answers the caller with. An AppError is itself. A dependency that failed after
 * the SDK's own retries (an AWS service throttling or at fault, a connection refused, dropped or
 * timed out) is a 503 the caller may retry; the function running out of time (middy's early
 * timeout) a 504; anything else a bare 500. Only the code and a fixed message reach the caller:
 * the error is kept as the cause, for the log.
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  type Failure = {
    name?: string;
    code?: string;
    status?: unknown;
    $fault?: string;
    $metadata?: unknown;
    cause?: unknown;
  };
  const e = (err ?? {}) as Failure;
  // Middy's early timeout, or one of the functions' own deadlines (AbortSignal.timeout).
  const middy = (e.cause as { package?: string } | undefined)?.package === "@middy/core";
  if (e.name === "TimeoutError" && (middy || err instanceof DOMException))
    return new AppError(504, "request_timeout", "the request did not finish in the time it has; try again", {
      cause: err,
    });
  const status = (e.$metadata as { httpStatusCode?: number } | undefined)?.httpStatusCode;
  const awsFault =
    e.$metadata !== undefined && ((e.$fault === "server" && PASSING.has(status ?? 0)) || THROTTLED.has(e.name ?? ""));
  // The PostgREST transport's error keeps the status Supabase answered (shared/stores/postgrest.ts):
  // 0 when it could not be reached at all.
  const supabase = typeof e.status === "number" && (e.status === 0 || PASSING.has(e.status));
  const network = NETWORK.has(e.code ?? "") || NETWORK.has((e.cause as Failure | undefined)?.code ?? "");
  if (awsFault || supabase || network || e.name === "TimeoutError")
    return new AppError(
      503,
      "service_unavailable",
      "a service this request needs is busy or unavailable; try again shortly",
      {
        cause: err,
        headers: { "retry-after": "1" },
      },
    );
  return new AppError(500, "internal_error", "internal error", { cause: err });
}
