import {
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
} from "@aws-sdk/client-dynamodb";
import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { apiHandler } from "../../shared/api-handler";
import { AppError, asAppError } from "../../shared/errors";
import { createLogger } from "../../shared/logger";

const $metadata = { httpStatusCode: 400, requestId: "r", attempts: 3, totalRetryDelay: 300 };

/** What the SDK throws for an error its client has no class for (S3's SlowDown is one): the service's base exception, named. */
const unmodeled = (name: string, fault: "client" | "server", httpStatusCode: number) =>
  new DynamoDBServiceException({ name, $fault: fault, $metadata: { ...$metadata, httpStatusCode }, message: name });

describe("what an error that is not an AppError answers", () => {
  it("a dependency throttling or at fault, after the SDK's own retries: 503 service_unavailable, to retry", () => {
    for (const err of [
      new ProvisionedThroughputExceededException({
        $metadata,
        message: "The level of configured provisioned throughput for the table was exceeded",
      }),
      new InternalServerError({ $metadata: { ...$metadata, httpStatusCode: 500 }, message: "Internal server error" }),
      unmodeled("ThrottlingException", "client", 400),
      unmodeled("SlowDown", "server", 503),
      unmodeled("ServiceUnavailable", "server", 503),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8000"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
      // The SDK's HTTP handler giving up on a request (its requestTimeout).
      Object.assign(new Error("Connection timed out after 5000 ms"), { name: "TimeoutError" }),
    ]) {
      const app = asAppError(err);
      expect([app.status, app.code], `${(err as Error).name}: ${(err as Error).message}`).toEqual([
        503,
        "service_unavailable",
      ]);
      expect(app.cause).toBe(err);
      expect(app.message).not.toContain((err as Error).message);
    }
  });

  it("also: Supabase answering 5xx, a fetch that could not connect, and a 503 says when to retry", () => {
    const cases = [
      // The PostgREST transport's error for a 503 (shared/stores/postgrest.ts keeps the status).
      Object.assign(new Error("record_turn failed: Could not query the database for the schema cache"), {
        status: 503,
      }),
      // postgrest-js's answer when its fetch failed: status 0.
      Object.assign(new Error("record_turn failed: TypeError: fetch failed"), { status: 0 }),
      // Node's fetch: the network error is the cause.
      new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      }),
      new TypeError("fetch failed", { cause: { code: "UND_ERR_CONNECT_TIMEOUT" } }),
    ];
    for (const err of cases) {
      const app = asAppError(err);
      expect([app.status, app.code], (err as Error).message).toEqual([503, "service_unavailable"]);
      expect(app.headers).toEqual({ "retry-after": "1" });
    }
  });

  it("a server fault that is not passing (a configuration error answered 502) and a 4xx from Supabase stay 500", () => {
    expect(asAppError(unmodeled("KMSAccessDeniedException", "server", 502)).status).toBe(500);
    expect(asAppError(Object.assign(new Error("insert failed: violates check"), { status: 400 })).status).toBe(500);
  });

  it("the function running out of time (middy's early timeout): 504 request_timeout", () => {
    const timeout = Object.assign(
      new Error("[AbortError]: The operation was aborted.", { cause: { package: "@middy/core" } }),
      {
        name: "TimeoutError",
      },
    );
    expect([asAppError(timeout).status, asAppError(timeout).code]).toEqual([504, "request_timeout"]);
  });

  it("anything else: a bare 500, nothing of it in the answer; an AppError stays itself", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    const validation = unmodeled("ValidationException", "client", 400);
    for (const err of [bug, validation, "a string", undefined]) {
      const app = asAppError(err);
      expect([app.status, app.code, app.message]).toEqual([500, "internal_error", "internal error"]);
    }
    const own = new AppError(404, "session_not_found", "no such session");
    expect(asAppError(own)).toBe(own);
  });

  it("reaches the client through every API handler: a throttled DynamoDB is a 503, a deadline a 504, never a bare 500", async () => {
    const logger = createLogger("errors-test");
    const event = {
      httpMethod: "GET",
      headers: {},
      requestContext: { requestId: "q" },
    } as unknown as APIGatewayProxyEvent;
    const context = (ms: number) => ({ getRemainingTimeInMillis: () => ms, awsRequestId: "a" }) as unknown as Context;
    const throttled = apiHandler(
      logger,
      async () => {
        throw new ProvisionedThroughputExceededException({ $metadata, message: "exceeded" });
      },
      { corsOrigins: undefined },
    );
    const res = await throttled(event, context(30_000));
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body).error.code).toBe("service_unavailable");
    const hung = apiHandler(logger, () => new Promise(() => {}), { corsOrigins: undefined });
    const late = await hung(event, context(60));
    expect(late.statusCode).toBe(504);
    expect(JSON.parse(late.body).error.code).toBe("request_timeout");
  });
});
