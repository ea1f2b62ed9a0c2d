import { InvokeCommand, LambdaClient, LambdaServiceException, type InvokeCommandOutput } from "@aws-sdk/client-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { queryDataTool } from "../../../graph/tools/data-files";
import type { FileRecord, FileRecords } from "../../../shared/files/records";
import { lambdaDataEngine } from "../../../shared/files/lambda-engine";
import { DEFAULT_SQL_LIMITS, SqlBusy, SqlError } from "../../../shared/files/sql-errors";

const lambda = mockClient(LambdaClient);
beforeEach(() => lambda.reset());
// Restored after the file: a worker runs other files after it (isolate: false).
afterAll(() => lambda.restore());
const engine = () => lambdaDataEngine("data-fn", new LambdaClient({ region: "us-east-1" }));
/** A payload as the SDK answers it (its blob adapter is a Uint8Array with helpers the engine does not use). */
const payload = (value: unknown) =>
  new TextEncoder().encode(value === undefined ? "" : JSON.stringify(value)) as InvokeCommandOutput["Payload"];
const serviceError = (name: string) =>
  new LambdaServiceException({ name, $fault: "client", $metadata: { httpStatusCode: 429 }, message: name });
const table = { name: "sales", key: "users/u/sessions/s/f", format: "csv" as const };
const query = () => engine().query({ tables: [table], sql: "SELECT 1", limits: DEFAULT_SQL_LIMITS });

describe("the data function by Lambda Invoke", () => {
  it("sends the request as the payload and returns the engine's answer", async () => {
    const rows = { columns: [{ name: "n", type: "INTEGER" }], rows: [{ n: 1 }], truncated: false };
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ ok: true, value: rows }) });
    expect(await query()).toEqual(rows);
    const sent = lambda.commandCalls(InvokeCommand)[0]!.args[0].input;
    expect(sent.FunctionName).toBe("data-fn");
    expect(JSON.parse(new TextDecoder().decode(sent.Payload as Uint8Array))).toMatchObject({
      op: "query",
      sql: "SELECT 1",
      tables: [table],
    });
  });

  it("turns the engine's own errors back into the errors they were", async () => {
    lambda.on(InvokeCommand).resolves({ Payload: payload({ ok: false, error: "sql", message: "no such column x" }) });
    await expect(query()).rejects.toThrow(new SqlError("no such column x"));
    lambda.on(InvokeCommand).resolves({ Payload: payload({ ok: false, error: "busy", message: "busy" }) });
    await expect(query()).rejects.toBeInstanceOf(SqlBusy);
  });

  it("makes a function error (a timeout, out of memory, a response too large) a SqlError with Lambda's reason", async () => {
    lambda.on(InvokeCommand).resolves({
      FunctionError: "Unhandled",
      Payload: payload({ errorType: "Sandbox.Timedout", errorMessage: "Task timed out after 30.00 seconds" }),
    });
    await expect(query()).rejects.toThrow(/data engine failed.*timed out after 30/);
    lambda.on(InvokeCommand).resolves({ FunctionError: "Unhandled", Payload: payload(undefined) });
    await expect(query()).rejects.toBeInstanceOf(SqlError);
  });

  it("makes throttling busy, a payload too large and a lost connection SqlErrors", async () => {
    lambda.on(InvokeCommand).rejects(serviceError("TooManyRequestsException"));
    await expect(query()).rejects.toBeInstanceOf(SqlBusy);
    lambda.on(InvokeCommand).rejects(serviceError("RequestTooLargeException"));
    await expect(query()).rejects.toThrow(/too large to send/);
    lambda.on(InvokeCommand).rejects(new Error("socket hang up"));
    await expect(query()).rejects.toThrow(/could not be reached/);
    lambda.on(InvokeCommand).resolves({ Payload: payload("not an answer") });
    await expect(query()).rejects.toThrow(/gave no answer/);
  });

  it("gives the model each failure as the tool's error, never a failed turn", async () => {
    const file: FileRecord = {
      file_id: "f",
      session_id: "s",
      user_id: "u",
      name: "sales.csv",
      media_type: "text/csv",
      kind: "data",
      status: "ready",
      bytes: 10,
      key: table.key,
      created_at: "2026-01-01T00:00:00Z",
      table: "sales",
      format: "csv",
      columns: [],
      row_count: 1,
    };
    const errors: unknown[] = [];
    const tool = queryDataTool({
      records: { list: async () => [file] } as unknown as FileRecords,
      engine: engine(),
      limits: DEFAULT_SQL_LIMITS,
      onError: (_tool, err) => errors.push(err),
    });
    const config = { configurable: { user_id: "u", session_id: "s" } };
    for (const failure of [
      () => lambda.on(InvokeCommand).rejects(serviceError("TooManyRequestsException")),
      () => lambda.on(InvokeCommand).rejects(serviceError("RequestTooLargeException")),
      () =>
        lambda.on(InvokeCommand).resolves({ FunctionError: "Unhandled", Payload: payload({ errorMessage: "OOM" }) }),
    ]) {
      failure();
      const out = JSON.parse(await tool.invoke({ sql: "SELECT 1" }, config));
      expect(out).toEqual({ success: false, error: expect.any(String) });
    }
    expect(errors).toEqual([]);
  });
});
