import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy, { type MiddlewareObj, type Request } from "@middy/core";
import httpHeaderNormalizer from "@middy/http-header-normalizer";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import { corsHeadersFor, parseOrigins } from "./cors";
import { jsonErrors } from "./http";
import type { Logger } from "./logger";

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export interface ApiHandlerOptions {
  /**
   * The browser origins allowed, read at the first answer: `() => config().CORS_ORIGINS`. Required,
   * so a new function cannot leave its answers without CORS headers by omission (which a browser
   * reports as a failed request); `undefined` (handler tests) allows no origin.
   */
  corsOrigins: (() => string | undefined) | undefined;
}

/**
 * The middleware every API Gateway handler shares: Lambda context and the request id
 * on every log line, lower-cased headers, errors as `{"error":{"code","message"}}`, and CORS
 * headers for the browser origins allowed (CORS_ORIGINS), on errors too.
 */
export function apiHandler(logger: Logger, handler: Handler, options: ApiHandlerOptions) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(corsResponses(options.corsOrigins))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(httpHeaderNormalizer())
    .use(jsonErrors(logger))
    .handler((event, context) => {
      logger.appendKeys({ requestId: event.requestContext?.requestId });
      return handler(event, context);
    });
}

/**
 * CORS headers on every answer, by shared/cors.ts's policy: the one the streaming functions and
 * the local gateway's preflights follow too, which is why this is not @middy/http-cors (a second
 * reading of the same setting). Used first, so it runs last, after errors became responses.
 */
function corsResponses(
  origins: (() => string | undefined) | undefined,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  let allowed: readonly string[] | undefined;
  const mark = async (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult>) => {
    if (!request.response) return;
    // Read at the first answer, not at import: a configuration error stays the handler's JSON 500
    // instead of failing the function's start; unreadable, it allows no origin.
    if (allowed === undefined) {
      try {
        allowed = parseOrigins(origins?.());
      } catch {
        allowed = [];
      }
    }
    request.response = {
      ...request.response,
      headers: { ...request.response.headers, ...corsHeadersFor(allowed, request.event.headers) },
    };
  };
  return { after: mark, onError: mark };
}
