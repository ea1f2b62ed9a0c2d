import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { randomUUID } from "node:crypto";
import { lambdaContext } from "../../infra/local/api-gateway";

/** A REST API proxy event as API Gateway delivers it, for calling handlers directly. */
export function apiEvent(options: {
  method: string;
  resource: string;
  path: string;
  body?: string | null;
  headers?: Record<string, string>;
  pathParameters?: Record<string, string>;
  authorizer?: Record<string, unknown> | null;
  isBase64Encoded?: boolean;
}): APIGatewayProxyEvent {
  const headers = { "Content-Type": "application/json", ...options.headers };
  return {
    resource: options.resource,
    path: options.path,
    httpMethod: options.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      authorizer: options.authorizer ?? null,
      protocol: "HTTP/1.1",
      httpMethod: options.method,
      identity: { sourceIp: "203.0.113.1" } as APIGatewayProxyEvent["requestContext"]["identity"],
      path: `/v1${options.path}`,
      stage: "v1",
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: "res",
      resourcePath: options.resource,
    },
  };
}

export const context = (): Context => lambdaContext("test");

export const chatEvent = (body: unknown, extra: Partial<Parameters<typeof apiEvent>[0]> = {}) =>
  apiEvent({
    method: "POST",
    resource: "/api/chat",
    path: "/api/chat",
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...extra,
  });

/** One SQS record as Lambda's event source delivers it: its body, and how often it was received. */
export const sqsRecord = (messageId: string, body: unknown, receives = 1) => ({
  messageId,
  receiptHandle: "h",
  body: typeof body === "string" ? body : JSON.stringify(body),
  attributes: {
    ApproximateReceiveCount: String(receives),
    SentTimestamp: "0",
    SenderId: "s",
    ApproximateFirstReceiveTimestamp: "0",
  },
  messageAttributes: {},
  md5OfBody: "",
  eventSource: "aws:sqs",
  eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:q",
  awsRegion: "us-east-1",
});
