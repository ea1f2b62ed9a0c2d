import type { DuckDBConnection, DuckDBInstance, DuckDBResult } from "@duckdb/node-api";
import {
  DEFAULT_SQL_LIMITS,
  SqlEngineUnavailable,
  SqlError,
  type DataTable,
  type QueryResult,
  type SqlLimits,
} from "./sql-errors";
import { slots } from "./slots";

export * from "./sql-errors";

/** DuckDB, loaded on first use. */
export async function loadDuckDb(): Promise<typeof import("@duckdb/node-api")> {
  try {
    return await import("@duckdb/node-api");
  } catch (err) {
    throw new SqlEngineUnavailable(err);
  }
}

/** The process's sandbox slots (their concurrency follows the latest limits). */
const sandboxSlots = slots(DEFAULT_SQL_LIMITS.concurrency);

/** The table function that reads one data file, by its format. */
function reader(table: DataTable): string {
  const path = quoteString(table.path);
  switch (table.format) {
    case "csv":
    case "tsv":
      return `read_csv(${path}, header = true, delim = ${quoteString(table.format === "tsv" ? "\t" : ",")}, sample_size = 20480)`;
    case "jsonl":
      // One object per line; the columns are the keys found in the first lines.
      return `read_json(${path}, format = 'newline_delimited', records = true, sample_size = 20480)`;
    case "parquet":
      return `read_parquet(${path})`;
  }
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
 * in a capped amount of memory on one thread, and returns at most maxRows rows and
 * maxResultBytes bytes, each text cell at most maxCellChars. At most `concurrency` sandboxes
 * are open in the process at once (open() waits for a slot, close() gives it back).
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
    private readonly release: () => void,
  ) {}

  /** A sandbox over `tables` for the length of `use`, then closed: the way every caller should take one. */
  static async run<T>(tables: DataTable[], limits: SqlLimits, use: (sandbox: SqlSandbox) => Promise<T>): Promise<T> {
    const sandbox = await SqlSandbox.open(tables, limits);
    try {
      return await use(sandbox);
    } finally {
      sandbox.close();
    }
  }

  /** Opens a sandbox, holding one of the process's slots until close(). */
  static async open(tables: DataTable[], limits: SqlLimits = DEFAULT_SQL_LIMITS): Promise<SqlSandbox> {
    const { DuckDBInstance } = await loadDuckDb();
    sandboxSlots.concurrency = limits.concurrency;
    const release = await sandboxSlots.take(limits.timeoutMs);
    let instance: DuckDBInstance | undefined;
    let connection: DuckDBConnection | undefined;
    try {
      instance = await DuckDBInstance.create(":memory:", {
        threads: "1",
        memory_limit: `${limits.memoryLimitMb}MB`,
        // No extension may be fetched or loaded behind our back (httpfs would mean network).
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "false",
        allow_community_extensions: "false",
        // Spilling to disk would be file access of its own.
        temp_directory: "",
      });
      connection = await instance.connect();
      const open = connection;
      await interruptAfter(open, limits.timeoutMs, "loading the data files", async () => {
        for (const table of tables) {
          await open.run(
            `CREATE TABLE ${quoteIdent(table.name)} AS SELECT * FROM ${reader(table)} LIMIT ${limits.maxFileRows}`,
          );
        }
      });
      await open.run("SET enable_external_access = false");
      await open.run("SET lock_configuration = true");
    } catch (err) {
      connection?.closeSync();
      instance?.closeSync();
      release();
      throw err;
    }
    return new SqlSandbox(
      instance,
      connection,
      limits,
      tables.map((t) => t.name),
      release,
    );
  }

  /** One read-only SELECT (or WITH ... SELECT); anything else is a SqlError. */
  async query(sql: string): Promise<QueryResult> {
    const text = sql.trim().replace(/;\s*$/, "");
    if (text === "") throw new SqlError("the query is empty");
    // Checked and read under one time limit: planning alone can take long (DuckDB folds constants
    // while it plans, and its interrupt is not checked inside one function call).
    return interruptAfter(this.connection, this.limits.timeoutMs, "the query", async () => {
      const statements = await this.connection.extractStatements(text);
      if (statements.count !== 1) throw new SqlError(`only one statement per query, found ${statements.count}`);
      // DuckDB plans some PRAGMAs and SHOW/DESCRIBE as SELECTs; the statement must also read as a query.
      const keyword = /^[a-z]+/i.exec(text.replace(/^(\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/)+/, ""))?.[0]?.toUpperCase();
      if (!keyword || !QUERY_KEYWORDS.has(keyword))
        throw new SqlError(`only SELECT queries are allowed (this starts with ${keyword ?? "nothing"})`);
      const { StatementType } = await loadDuckDb();
      const prepared = await statements.prepare(0);
      try {
        if (prepared.statementType !== StatementType.SELECT)
          throw new SqlError(`only SELECT queries are allowed (this is ${StatementType[prepared.statementType]})`);
      } finally {
        prepared.destroySync();
      }
      // The one statement checked above, as a subquery under the row cap, so the engine stops after
      // maxRows + 1 rows (its own lines: a trailing -- comment cannot swallow the parenthesis).
      return this.readRows(`SELECT * FROM (\n${text}\n) LIMIT ${this.limits.maxRows + 1}`, this.limits.maxRows);
    });
  }

  /** Columns with their inferred types, the row count and a few rows (bounded as query results are). */
  async describe(table: string, sampleRows = 5) {
    if (!this.tables.includes(table)) throw new SqlError(`no data file is exposed as table ${table}`);
    const columns = await this.connection.runAndReadAll(`DESCRIBE ${quoteIdent(table)}`);
    const count = await this.connection.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${quoteIdent(table)}`);
    const sample = await this.read(`SELECT * FROM ${quoteIdent(table)} LIMIT ${sampleRows}`, sampleRows);
    return {
      table,
      columns: (columns.getRowObjectsJson() as { column_name: string; column_type: string }[]).map((c) => ({
        name: c.column_name,
        type: c.column_type,
      })),
      row_count: Number(count.getRowObjectsJson()[0]!.n),
      sample_rows: sample.rows,
    };
  }

  close(): void {
    try {
      this.connection.closeSync();
      this.instance.closeSync();
    } finally {
      this.release();
    }
  }

  /**
   * Runs a SELECT and reads its rows chunk by chunk, row by row, keeping at most `maxRows` and
   * `maxResultBytes` (as JSON) and cutting text cells to maxCellChars: the whole result is never
   * held, so 200 rows of 1 MB cells cost a few MB, not the gigabytes they took at once.
   */
  private read(sql: string, maxRows: number): Promise<QueryResult> {
    return interruptAfter(this.connection, this.limits.timeoutMs, "the query", () => this.readRows(sql, maxRows));
  }

  /** read() without a time limit of its own: its caller's counts. */
  private async readRows(sql: string, maxRows: number): Promise<QueryResult> {
    const { JsonDuckDBValueConverter } = await loadDuckDb();
    const { maxResultBytes, maxCellChars } = this.limits;
    const prepared = await this.connection.prepare(sql);
    let result: DuckDBResult;
    try {
      result = await prepared.stream();
    } finally {
      prepared.destroySync();
    }
    const names = result.deduplicatedColumnNames();
    const columns = names.map((name, i) => ({ name, type: result.columnType(i).toString() }));
    // The column list counts too: a query may name a column hundreds of times over.
    const listed = Buffer.byteLength(JSON.stringify(columns));
    if (listed > maxResultBytes)
      throw new SqlError(
        `the result's ${columns.length} columns take ${Math.ceil(listed / 1024)} KB to list; at most ${Math.round(maxResultBytes / 1024)} KB (SQL_MAX_RESULT_BYTES) fit: select fewer columns`,
      );
    const rows: Record<string, unknown>[] = [];
    let bytes = 2 + listed; // the rows' brackets, and the column list
    let truncated = false;
    let cutCells = false;
    reading: for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      for (let r = 0; r < chunk.rowCount; r++) {
        if (rows.length === maxRows) {
          truncated = true;
          break reading;
        }
        const values = chunk.convertRowValues(r, JsonDuckDBValueConverter);
        // No prototype: a column may be named "__proto__", which on a plain object would set
        // the row's prototype rather than hold the value.
        const row = Object.create(null) as Record<string, unknown>;
        names.forEach((name, i) => {
          const value = values[i];
          if (typeof value === "string" && value.length > maxCellChars) {
            row[name] = `${Array.from(value.slice(0, maxCellChars + 1))
              .slice(0, maxCellChars)
              .join("")}…`;
            cutCells = true;
          } else row[name] = value;
        });
        const size = Buffer.byteLength(JSON.stringify(row)) + 1;
        if (bytes + size > maxResultBytes) {
          truncated = true;
          break reading;
        }
        bytes += size;
        rows.push(row);
      }
    }
    return { columns, rows, truncated, ...(cutCells ? { cut_cells: true } : {}) };
  }
}

/**
 * Runs `work` on the connection, interrupting it after `ms`: a statement still running then fails
 * with a message for the model, as does work that ended after `ms` (a call the interrupt could not
 * stop). Any other failure is DuckDB's message, cleaned.
 */
async function interruptAfter<T>(connection: DuckDBConnection, ms: number, what: string, work: () => Promise<T>) {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, ms);
  try {
    const done = await work();
    // A call the interrupt could not stop ended after the limit: stopped all the same.
    if (timedOut) throw new SqlError(`${what} was stopped after ${ms} ms`);
    return done;
  } catch (err) {
    if (timedOut) throw new SqlError(`${what} was stopped after ${ms} ms`);
    if (err instanceof SqlError) throw err;
    throw new SqlError(cleanMessage(err));
  } finally {
    clearTimeout(timer);
  }
}

/** DuckDB's messages are good; drop the source excerpt it appends, which repeats the query. */
function cleanMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n\nLINE ")[0]!.trim();
}
