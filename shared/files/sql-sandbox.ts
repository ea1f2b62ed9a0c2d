import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";

/** One data file of the session, exposed to SQL as a table. */
export interface DataTable {
  /** the table name the model uses (see tableName) */
  name: string;
  /** a local path the engine reads once, while loading */
  path: string;
  format: "csv" | "tsv";
}

export interface SqlLimits {
  /** a statement still running after this is interrupted */
  timeoutMs: number;
  /** DuckDB's memory_limit, in MB: a query needing more fails instead of taking the process down */
  memoryLimitMb: number;
  /** rows returned to the model; more are cut and the result says so */
  maxRows: number;
  /** rows loaded per data file */
  maxFileRows: number;
}

export const DEFAULT_SQL_LIMITS: SqlLimits = {
  timeoutMs: 5_000,
  memoryLimitMb: 256,
  maxRows: 200,
  maxFileRows: 1_000_000,
};

/** A query the sandbox refused or that failed: the message is meant for the model. */
export class SqlError extends Error {}

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

/** DuckDB, loaded on first use. */
export async function loadDuckDb(): Promise<typeof import("@duckdb/node-api")> {
  try {
    return await import("@duckdb/node-api");
  } catch (err) {
    throw new SqlEngineUnavailable(err);
  }
}

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  /** true when the query returned more than maxRows and only the first maxRows are here */
  truncated: boolean;
}

/** "Sales Q1.csv" -> sales_q1: the file name without extension, as a plain SQL identifier. */
export function tableName(fileName: string): string {
  const base = fileName.replace(/\.[^.]*$/, "").toLowerCase();
  const name = base.replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  return /^[a-z_]/.test(name) ? name : `t_${name}`;
}

const QUERY_KEYWORDS = new Set(["SELECT", "WITH", "FROM", "VALUES"]);
const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;
const quoteString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * Read-only SQL over a session's data files, in DuckDB. The files are copied into an
 * in-memory database first; then file and network access are switched off
 * (enable_external_access = false) and the configuration is locked, so no statement can
 * read another file, write one, attach a database or load an extension. On top of that
 * only a single SELECT is accepted, runs under a timeout (the connection is interrupted),
 * in a capped amount of memory on one thread, and returns at most maxRows rows.
 *
 * DuckDB is loaded on first use (dynamic import): a chat function whose session has no
 * data files never pays for it. See docs and `npm run bench -- data-files` for the choice.
 */
export class SqlSandbox {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly limits: SqlLimits,
    readonly tables: string[],
  ) {}

  static async open(tables: DataTable[], limits: SqlLimits = DEFAULT_SQL_LIMITS): Promise<SqlSandbox> {
    const { DuckDBInstance } = await loadDuckDb();
    const instance = await DuckDBInstance.create(":memory:", {
      threads: "1",
      memory_limit: `${limits.memoryLimitMb}MB`,
      // No extension may be fetched or loaded behind our back (httpfs would mean network).
      autoinstall_known_extensions: "false",
      autoload_known_extensions: "false",
      allow_community_extensions: "false",
      // Spilling to disk would be file access of its own.
      temp_directory: "",
    });
    const connection = await instance.connect();
    try {
      for (const table of tables) {
        const delim = table.format === "tsv" ? "\t" : ",";
        await connection.run(
          `CREATE TABLE ${quoteIdent(table.name)} AS SELECT * FROM read_csv(${quoteString(table.path)}, ` +
            `header = true, delim = ${quoteString(delim)}, sample_size = 20480) LIMIT ${limits.maxFileRows}`,
        );
      }
      await connection.run("SET enable_external_access = false");
      await connection.run("SET lock_configuration = true");
    } catch (err) {
      connection.closeSync();
      instance.closeSync();
      throw err;
    }
    return new SqlSandbox(
      instance,
      connection,
      limits,
      tables.map((t) => t.name),
    );
  }

  /** One read-only SELECT (or WITH ... SELECT); anything else is a SqlError. */
  async query(sql: string): Promise<QueryResult> {
    const text = sql.trim().replace(/;\s*$/, "");
    if (text === "") throw new SqlError("the query is empty");
    const statements = await this.connection.extractStatements(text).catch((err) => {
      throw new SqlError(cleanMessage(err));
    });
    if (statements.count !== 1) throw new SqlError(`only one statement per query, found ${statements.count}`);
    // DuckDB plans some PRAGMAs and SHOW/DESCRIBE as SELECTs; the statement must also read as a query.
    const keyword = /^[a-z]+/i.exec(text.replace(/^(\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/)+/, ""))?.[0]?.toUpperCase();
    if (!keyword || !QUERY_KEYWORDS.has(keyword))
      throw new SqlError(`only SELECT queries are allowed (this starts with ${keyword ?? "nothing"})`);
    const { StatementType } = await loadDuckDb();
    const prepared = await statements.prepare(0).catch((err) => {
      throw new SqlError(cleanMessage(err));
    });
    try {
      if (prepared.statementType !== StatementType.SELECT)
        throw new SqlError(`only SELECT queries are allowed (this is ${StatementType[prepared.statementType]})`);
      const reader = await this.withTimeout(prepared.streamAndReadUntil(this.limits.maxRows + 1));
      const names = reader.columnNames();
      const types = reader.columnTypes().map((t) => t.toString());
      const rows = (reader.getRowObjectsJson() as Record<string, unknown>[]).slice(0, this.limits.maxRows + 1);
      return {
        columns: names.map((name, i) => ({ name, type: types[i]! })),
        rows: rows.slice(0, this.limits.maxRows),
        truncated: rows.length > this.limits.maxRows,
      };
    } finally {
      prepared.destroySync();
    }
  }

  /** Columns with their inferred types, the row count and a few rows. */
  async describe(table: string, sampleRows = 5) {
    if (!this.tables.includes(table)) throw new SqlError(`no data file is exposed as table ${table}`);
    const columns = await this.connection.runAndReadAll(`DESCRIBE ${quoteIdent(table)}`);
    const count = await this.connection.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${quoteIdent(table)}`);
    const sample = await this.connection.runAndReadAll(`SELECT * FROM ${quoteIdent(table)} LIMIT ${sampleRows}`);
    return {
      table,
      columns: (columns.getRowObjectsJson() as { column_name: string; column_type: string }[]).map((c) => ({
        name: c.column_name,
        type: c.column_type,
      })),
      row_count: Number(count.getRowObjectsJson()[0]!.n),
      sample_rows: sample.getRowObjectsJson() as Record<string, unknown>[],
    };
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async withTimeout<T>(work: Promise<T>): Promise<T> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.connection.interrupt();
    }, this.limits.timeoutMs);
    try {
      return await work;
    } catch (err) {
      if (timedOut) throw new SqlError(`the query was stopped after ${this.limits.timeoutMs} ms`);
      throw new SqlError(cleanMessage(err));
    } finally {
      clearTimeout(timer);
    }
  }
}

/** DuckDB's messages are good; drop the source excerpt it appends, which repeats the query. */
function cleanMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n\nLINE ")[0]!.trim();
}
