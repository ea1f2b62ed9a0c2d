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
