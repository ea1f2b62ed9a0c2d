/**
 * The SQL engine's vocabulary, without the engine: its limits, its errors and its answers. The
 * functions that ask the data function (functions/data.ts) for an answer import only this, so their
 * bundles never reference DuckDB (infra/aws/bundle/native.ts fails a build that would ship it).
 */
import type { Config } from "../config";

/** How a data file's rows are written. */
export type DataFormat = "csv" | "tsv" | "jsonl" | "parquet";

/** One data file of the session, exposed to SQL as a table. */
export interface DataTable {
  /** the table name the model uses (see table-names.ts) */
  name: string;
  /** a local path the engine reads once, while loading */
  path: string;
  format: DataFormat;
}

export interface SqlLimits {
  /** loading the files, and then each statement: still running after this, it is interrupted */
  timeoutMs: number;
  /** DuckDB's memory_limit, in MB: a query needing more fails instead of taking the process down */
  memoryLimitMb: number;
  /** rows returned to the model; more are cut and the result says so */
  maxRows: number;
  /** rows loaded per data file */
  maxFileRows: number;
  /** bytes of rows (as JSON) returned to the model; the rows past it are cut and the result says so */
  maxResultBytes: number;
  /** characters of one text cell returned; a longer one is cut, ending in "…" */
  maxCellChars: number;
  /**
   * Sandboxes open at once in this process; another waits (at most timeoutMs) for one to close.
   * DuckDB's calls run on libuv's thread pool (4 threads): four runaway queries filled it, and
   * every file, DNS and zlib call of every other request stalled behind them.
   */
  concurrency: number;
}

export const DEFAULT_SQL_LIMITS: SqlLimits = {
  timeoutMs: 5_000,
  memoryLimitMb: 256,
  maxRows: 200,
  maxFileRows: 1_000_000,
  maxResultBytes: 64 * 1024,
  maxCellChars: 2_000,
  concurrency: 2,
};

/** The limits a deployment configured (shared/config.ts), the defaults for what it leaves out. */
export function sqlLimitsOf(
  config: Partial<
    Pick<
      Config,
      | "SQL_TIMEOUT_MS"
      | "SQL_MEMORY_MB"
      | "SQL_MAX_ROWS"
      | "SQL_MAX_RESULT_BYTES"
      | "SQL_CONCURRENCY"
      | "FILES_MAX_ROWS"
    >
  >,
): SqlLimits {
  const d = DEFAULT_SQL_LIMITS;
  return {
    timeoutMs: config.SQL_TIMEOUT_MS ?? d.timeoutMs,
    memoryLimitMb: config.SQL_MEMORY_MB ?? d.memoryLimitMb,
    maxRows: config.SQL_MAX_ROWS ?? d.maxRows,
    maxFileRows: config.FILES_MAX_ROWS ?? d.maxFileRows,
    maxResultBytes: config.SQL_MAX_RESULT_BYTES ?? d.maxResultBytes,
    maxCellChars: d.maxCellChars,
    concurrency: config.SQL_CONCURRENCY ?? d.concurrency,
  };
}

/**
 * The longest message a SqlError keeps. DuckDB puts a query's own values in its messages
 * (`error(x)`, a failed CAST of x): a message goes to the model and into the checkpoint as the
 * tool's result, so it is bounded as a result is, whatever built it.
 */
export const SQL_ERROR_MAX_CHARS = 2_000;

/** A query the sandbox refused or that failed: the message is meant for the model. */
export class SqlError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(boundedMessage(message), options);
  }
}

function boundedMessage(message: string): string {
  if (message.length <= SQL_ERROR_MAX_CHARS) return message;
  // Sliced, not spread into code points (a message can be many MB); never half a surrogate pair.
  const kept = message.slice(0, SQL_ERROR_MAX_CHARS).replace(/[\uD800-\uDBFF]$/, "");
  const kb = Math.ceil(Buffer.byteLength(message) / 1024).toLocaleString("en-US");
  return `${kept}… (cut: the whole message was ${kb} KB)`;
}

/** Every slot was taken for longer than the wait allowed: the engine's state, not the query's fault. */
export class SqlBusy extends SqlError {
  constructor() {
    super("the SQL engine is busy with other queries; try again in a moment");
    this.name = "SqlBusy";
  }
}

/**
 * DuckDB's native binding is not installed for this platform (a Lambda bundle built without it):
 * data files cannot be read here. Said plainly to the model and on a rejected upload, never as a
 * misleading "not a readable CSV".
 */
export class SqlEngineUnavailable extends SqlError {
  constructor(cause: unknown) {
    super(
      "data files are not available in this deployment: the SQL engine (DuckDB) is not installed for this platform",
      { cause },
    );
    this.name = "SqlEngineUnavailable";
  }
}

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  /** true when the query returned more rows than are here (past maxRows or maxResultBytes) */
  truncated: boolean;
  /** true when a text cell was cut to maxCellChars */
  cut_cells?: boolean;
}
