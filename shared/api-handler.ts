import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import httpHeaderNormalizer from "@middy/http-header-normalizer";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import { jsonErrors } from "./http";
import type { Logger } from "./logger";

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The middleware every API Gateway handler shares: Lambda context and the request id
 * on every log line, lower-cased headers, and errors as `{"error":{"code","message"}}`.
 */
export function apiHandler(logger: Logger, handler: Handler) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(httpHeaderNormalizer())
    .use(jsonErrors(logger))
    .handler((event, context) => {
      logger.appendKeys({ requestId: event.requestContext?.requestId });
      return handler(event, context);
    });
}
