import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Writable } from "node:stream";

/** API Gateway's own payload cap: a larger body never reaches the function. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Lambda's cap on a synchronous invocation's response (the whole result, as JSON): over it the
 * invocation fails and API Gateway answers 502, so the stand-in does too, and a route that could
 * answer more (an export) is caught here rather than in AWS. Streamed responses are not capped so.
 */
export const MAX_RESPONSE_BYTES = 6_291_556;

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult | void>;
export type StreamingHandler = (event: APIGatewayProxyEvent, stream: Writable, context: Context) => Promise<void>;

export interface Route {
  /** the function's name, as Lambda would report it */
  name: string;
  method: string;
  /** API Gateway resource path, e.g. /api/sessions/{id}/messages */
  resource: string;
  handler: ProxyHandler | StreamingHandler;
  /** the function's timeout: its context's remaining time starts there */
  timeoutMs: number;
}

/** A path segment that is not valid percent-encoding (`%`, `%zz`, a cut UTF-8 sequence). */
export class MalformedPath extends Error {
  constructor(segment: string) {
    super(`path segment "${segment.slice(0, 64)}" is not valid percent-encoding`);
    this.name = "MalformedPath";
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new MalformedPath(segment);
  }
}

/**
 * Matches a request path against a resource template; returns the path parameters, decoded.
 * Throws MalformedPath when a parameter cannot be decoded: the stack answers 400, not a crash.
 */
export function matchResource(resource: string, path: string): Record<string, string> | undefined {
  const want = resource.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith("{") && w.endsWith("}")) {
      if (got[i] === "") return undefined;
      params[w.slice(1, -1)] = decodeSegment(got[i]!);
    } else if (w !== got[i]) return undefined;
  }
  return params;
}

/** The REST API (v1) proxy event API Gateway would build for this request. */
export function proxyEvent(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  resource: string,
  pathParameters: Record<string, string>,
): APIGatewayProxyEvent {
  // No prototypes: a header or parameter may be named constructor or __proto__, which a plain
  // object already answers. In Lambda the event is parsed JSON, where such keys are the object's own.
  const map = <T>() => Object.create(null) as Record<string, T>;
  const headers = map<string>();
  const multiValueHeaders = map<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query = map<string>();
  const multiQuery = map<string[]>();
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const hasQuery = url.searchParams.size > 0;
  return {
    resource,
    path: url.pathname,
    httpMethod: req.method ?? "GET",
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString("utf8") : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: req.method ?? "GET",
      identity: {
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: req.headers["user-agent"] ?? null,
      } as APIGatewayProxyEvent["requestContext"]["identity"],
      path: `/local${url.pathname}`,
      stage: "local",
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: "local",
      resourcePath: resource,
    },
  };
}

export function lambdaContext(functionName: string, timeoutMs = 29_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

export function sendProxyResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  if (Buffer.byteLength(JSON.stringify(result)) > MAX_RESPONSE_BYTES) {
    res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "Internal server error" }));
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  const body = result.isBase64Encoded
    ? Buffer.from(result.body ?? "", "base64")
    : Buffer.from(result.body ?? "", "utf8");
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

/** Reads the body up to API Gateway's limit; undefined when it is over. */
export async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The response stream a streaming handler writes to, as API Gateway's streaming integration
 * relays it: the prelude becomes the status and headers, then every write goes out at once.
 */
export function responseStream(
  res: ServerResponse,
): Writable & { setPrelude(p: { statusCode: number; headers?: Record<string, string> }): void } {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      if (!res.headersSent) res.writeHead(200, { "content-type": "application/octet-stream" });
      res.write(chunk, done);
    },
    final(done) {
      if (!res.headersSent) res.writeHead(200);
      res.end(done);
    },
  });
  res.on("close", () => stream.destroy()); // the client left: later writes are dropped
  // The handler destroyed its stream (a joinStream cut at its deadline): the connection is cut, as
  // Lambda's is, so the client reconnects rather than waiting on a response that never ends.
  stream.on("close", () => {
    if (!res.writableEnded) res.destroy();
  });
  return Object.assign(stream, {
    setPrelude(prelude: { statusCode: number; headers?: Record<string, string> }) {
      if (!res.headersSent) {
        res.writeHead(prelude.statusCode, prelude.headers);
        res.flushHeaders();
      }
    },
  });
}
