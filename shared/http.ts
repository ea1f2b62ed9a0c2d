import type { MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import type * as z from "./zod";
import { type AppError, asAppError, badRequest, payloadTooLarge } from "./errors";
import type { Logger } from "./logger";
import { JsonTextError, parseJsonText } from "./json-text";

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

/**
 * Replies written by the offline rule-based model (no BEDROCK_MODEL_ID: the local stack, or a
 * deployment made with demo=true) say so in a header, so nobody mistakes a stand-in for Bedrock.
 */
export const STAND_IN_HEADER = "x-agent-stand-in";
export function standInHeaders(config: { BEDROCK_MODEL_ID?: string }): Record<string, string> {
  return config.BEDROCK_MODEL_ID ? {} : { [STAND_IN_HEADER]: "offline rule-based model, not Bedrock" };
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { ...details, code, message } };
}

/** An AppError's body and headers, for every place that answers one. */
export function appErrorParts(err: AppError) {
  return { body: errorBody(err.code, err.message, err.details), headers: err.headers ?? {} };
}

/** What a streaming function answers for an error before its stream started (asAppError). */
export function errorAnswer(err: unknown): { status: number; body: unknown; headers: Record<string, string> } {
  const app = asAppError(err);
  return { status: app.status, ...appErrorParts(app) };
}

/** The raw body as text; API Gateway hands binary media types over base64-encoded. */
export function rawBody(event: APIGatewayProxyEvent): string {
  if (event.body == null) return "";
  return event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
}

/**
 * Parses and validates a JSON body; every failure is a 400 that names the field, or a 413 for a
 * body over `maxBytes`, checked before parsing. (API Gateway's own cap is 10 MB and cannot be
 * lowered, so the byte limit lives here.)
 */
export function parseJsonBody<S extends z.ZodMiniType>(
  event: APIGatewayProxyEvent,
  schema: S,
  { maxBytes }: { maxBytes?: number } = {},
): z.infer<S> {
  const text = rawBody(event);
  if (maxBytes !== undefined && Buffer.byteLength(text) > maxBytes) throw payloadTooLarge(maxBytes);
  if (text.trim() === "") throw badRequest("invalid_json", "request body must be a JSON object");
  let data: unknown;
  try {
    data = parseJsonText(text);
  } catch (err) {
    if (err instanceof JsonTextError) throw badRequest("invalid_json", `request body: ${err.message}`);
    throw badRequest("invalid_json", "request body is not valid JSON");
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw badRequest("invalid_json", "request body must be a JSON object");
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".") || "body";
    const name = issue.path.join("_") || "body";
    const code = issue.code === "too_big" ? `${name}_too_large` : `invalid_${name}`;
    throw badRequest(code, `${field}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Turns thrown errors into `{"error":{"code","message"}}` responses. An AppError keeps its
 * status; anything else is answered as asAppError says (a failed dependency 503, the deadline
 * 504, else a bare 500), and logged with its stack, so internals never reach the client.
 */
export function jsonErrors(logger: Logger): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const err = request.error;
      const app = asAppError(err);
      if (app !== err) logger.error("unhandled error", { code: app.code, error: err });
      else if (app.status >= 500) logger.error("request failed", { code: app.code, error: app, cause: app.cause });
      const { body, headers } = appErrorParts(app);
      request.response = json(app.status, body, headers);
    },
  };
}

/** The query string, checked against `schema`: the first problem becomes a 400 naming the parameter. */
export function parseQuery<S extends z.ZodMiniType>(event: APIGatewayProxyEvent, schema: S): z.infer<S> {
  const query = schema.safeParse(event.queryStringParameters ?? {});
  if (query.success) return query.data;
  const issue = query.error.issues[0]!;
  throw badRequest(`invalid_${issue.path.join("_")}`, `${issue.path.join(".")}: ${issue.message}`);
}
