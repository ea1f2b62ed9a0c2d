import type { Column } from "./records";
import type { Inspection, TextEncoding } from "./inspect";
import {
  SqlBusy,
  SqlEngineUnavailable,
  SqlError,
  type DataFormat,
  type QueryResult,
  type SqlLimits,
} from "./sql-errors";

/** A data file as the engine reads it: the object's key, and the table it becomes. */
export interface TableRef {
  name: string;
  key: string;
  format: DataFormat;
  encoding?: TextEncoding;
}

export interface DescribeResult {
  table: string;
  columns: Column[];
  row_count: number;
  sample_rows: Record<string, unknown>[];
}

/**
 * What the data function is asked (functions/data.ts), as plain JSON: a Lambda payload in AWS, a
 * worker's message locally. Objects travel by key, never by their bytes (Lambda's payload is 6 MB).
 */
export type EngineRequest =
  | { op: "inspect"; key: string; name: string; media_type: string; maxRows: number; limits: SqlLimits }
  | { op: "describe"; table: TableRef; limits: SqlLimits }
  | { op: "query"; tables: TableRef[]; sql: string; limits: SqlLimits };

/** The engine's answer: its errors travel as values (an error class does not cross a payload). */
export type EngineAnswer =
  { ok: true; value: unknown } | { ok: false; error: "sql" | "busy" | "unavailable"; message: string };

/** The data files' SQL engine, wherever it runs; its failures are SqlErrors, messages for the model. */
export interface DataEngine {
  inspect(request: Omit<Extract<EngineRequest, { op: "inspect" }>, "op">): Promise<Inspection>;
  describe(request: Omit<Extract<EngineRequest, { op: "describe" }>, "op">): Promise<DescribeResult>;
  query(request: Omit<Extract<EngineRequest, { op: "query" }>, "op">): Promise<QueryResult>;
}

/** An error the engine answered with, as the SqlError it was on its side. */
export function errorOf(answer: Extract<EngineAnswer, { ok: false }>): SqlError {
  if (answer.error === "busy") return new SqlBusy();
  if (answer.error === "unavailable") return new SqlEngineUnavailable(answer.message);
  return new SqlError(answer.message);
}

/** An error as the engine answers it; anything not a SqlError is the caller's to report. */
export function answerOfError(err: unknown): EngineAnswer {
  if (err instanceof SqlBusy) return { ok: false, error: "busy", message: err.message };
  if (err instanceof SqlEngineUnavailable) return { ok: false, error: "unavailable", message: err.message };
  if (err instanceof SqlError) return { ok: false, error: "sql", message: err.message };
  throw err;
}

/** A DataEngine over one way of sending requests (Lambda Invoke, a worker pool, this process). */
export function engineClient(send: (request: EngineRequest) => Promise<EngineAnswer>): DataEngine {
  const ask = async <T>(request: EngineRequest): Promise<T> => {
    const answer = await send(request);
    if (!answer.ok) throw errorOf(answer);
    return answer.value as T;
  };
  return {
    inspect: (r) => ask({ op: "inspect", ...r }),
    describe: (r) => ask({ op: "describe", ...r }),
    query: (r) => ask({ op: "query", ...r }),
  };
}

/** No engine in this deployment: each data tool and data upload says so plainly. */
export const noDataEngine: DataEngine = engineClient(async () => ({
  ok: false,
  error: "unavailable",
  message: new SqlEngineUnavailable("no data function is configured").message,
}));
