import { tool } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import * as z from "../../shared/zod";
import type { DataEngine, TableRef } from "../../shared/files/data-engine";
import type { FileRecord, FileRecords } from "../../shared/files/records";
import { SqlError, type SqlLimits } from "../../shared/files/sql-errors";
import { withTableNames } from "../../shared/files/table-names";
import { textTokens } from "../../shared/models/token-estimate";
import { truncateCodePoints } from "../../shared/text";
import { OFFLINE_HINT, type OfflineHint } from "../../shared/models/offline-rules";
import { switchMetadata } from "./groups";
import { scopeOf } from "./tool";

/** A SQL statement in backticks: the offline stand-in runs it as written; it cannot write SQL itself. */
const SQL_IN_BACKTICKS = /`\s*((?:select|with|from)\b[^`]*)`/i;
// Tried only where a name can begin: unanchored, a run of name characters was scanned again from
// each of its positions, 300 ms on the event loop for a 16 KB message of letters.
const DATA_FILE_NAME = /(?<![\w.-])[\w.-]+\.(?:csv|tsv|jsonl|ndjson|parquet)\b/i;
const ABOUT_FILE_CONTENTS = /\b(columns?|fields?|contents?|schema|headers?|what(?:'s| is) in|look like|rows?)\b/i;
export const CANNOT_WRITE_SQL =
  "I'm the offline stand-in, not a language model: I cannot turn a plain-language question into SQL. " +
  "Ask about a file's columns, or put a SQL statement in backticks, e.g. run `SELECT region, SUM(amount) FROM sales GROUP BY region`.";

const formatCell = (v: unknown) =>
  v === null || v === undefined ? "NULL" : typeof v === "object" ? JSON.stringify(v) : String(v);

/** A data file's description or a query's rows, as plain text: the stand-in relays, it does not interpret. */
function relayData(output: Record<string, unknown>): string {
  // A result cut to fit the model's context is text, not JSON (graph/chat/context-window.ts).
  if (typeof output.text === "string" && output.columns === undefined) return output.text;
  const columns = (output.columns as { name: string; type: string }[] | undefined) ?? [];
  if (output.rows === undefined)
    return `${String(output.file)} (table ${String(output.table)}) has ${columns.length} columns: ${columns
      .map((c) => `${c.name} (${c.type})`)
      .join(", ")}; ${String(output.row_count)} rows.`;
  const rows = output.rows as Record<string, unknown>[];
  const lines = [
    columns.map((c) => c.name).join(" | "),
    ...rows.map((r) => columns.map((c) => formatCell(r[c.name])).join(" | ")),
  ];
  if (output.truncated) lines.push(`(${String(output.note ?? "more rows were cut")})`);
  return `${rows.length} row${rows.length === 1 ? "" : "s"}:\n${lines.join("\n")}`;
}

/** What the offline stand-in (not a language model) needs to know to call each data tool. */
const DESCRIBE_HINT: OfflineHint = {
  trigger: new RegExp(`^(?=.*${DATA_FILE_NAME.source})(?=.*${ABOUT_FILE_CONTENTS.source})`, "is"),
  args: (text) => ({ file: DATA_FILE_NAME.exec(text)![0] }),
  relays: relayData,
  declines: { trigger: DATA_FILE_NAME, reply: CANNOT_WRITE_SQL },
};
const QUERY_HINT: OfflineHint = {
  trigger: SQL_IN_BACKTICKS,
  args: (text) => ({ sql: SQL_IN_BACKTICKS.exec(text)![1]!.trim() }),
  relays: relayData,
};

export interface DataFileDeps {
  records: FileRecords;
  /** the data function (a worker pool locally): DuckDB never runs in the chat process */
  engine: DataEngine;
  limits: SqlLimits;
  onError?: (tool: string, err: unknown) => void;
}

/**
 * The run's own files: its session's, uploaded by its user, ready; each data file with its table
 * name, unique within the session (table-names.ts). The model never names a session or user.
 */
export async function sessionFiles(deps: Pick<DataFileDeps, "records">, config: LangGraphRunnableConfig | undefined) {
  const { userId, sessionId } = scopeOf(config);
  if (!sessionId) return [];
  const ready = (await deps.records.list(sessionId)).filter((f) => f.user_id === userId && f.status === "ready");
  return withTableNames(ready);
}

/** What the prompt's line for a data file needs: a file's record, or its summary on the session's owner record. */
export type PromptDataFile = Pick<FileRecord, "file_id" | "name" | "created_at" | "table" | "row_count" | "columns"> & {
  kind?: FileRecord["kind"];
  /** the file's column count, when `columns` lists fewer */
  column_count?: number;
};

/** The tokens the data files' lines may take in the system prompt, all files together. */
export const DATA_FILES_PROMPT_TOKENS = 1_500;

/**
 * One line per data file for the system prompt, so the model knows the tables before it asks,
 * within DATA_FILES_PROMPT_TOKENS all together: each file gets its share, and a file whose columns
 * do not fit lists those that do and how many more describe_data_file shows. Every column in
 * every prompt made a 2,000-column file overflow every turn's model call. Table names are shown
 * quoted, as a query must write them (any script, a keyword like "select").
 */
export function describeDataFilesForPrompt(
  files: PromptDataFile[],
  budgetTokens = DATA_FILES_PROMPT_TOKENS,
): string | undefined {
  // Named as the tools name them: files checked before names were claimed in their session
  // (FileRecords.claimTableName) may be stored under one name.
  const data = withTableNames(files.map((f) => ({ ...f, kind: f.kind ?? "data", status: "ready" }))).filter(
    (f) => f.kind === "data",
  );
  if (data.length === 0) return undefined;
  const heading =
    "Data files of this session (query them with query_data; each is a table, named as shown in double quotes):";
  // Each file's share, in bytes (the token rule is 4 bytes a token), one more for its line break.
  const share = Math.max(0, Math.floor((budgetTokens - textTokens(heading)) / data.length) * 4 - 4);
  const bytes = (text: string) => Buffer.byteLength(text);
  const line = (f: PromptDataFile) => {
    const head = `- ${inPrompt(truncateCodePoints(f.name, 80))} as table ${quoteIdentifier(f.table!)}: ${f.row_count} rows; columns `;
    // A type names a nested value's keys (a JSON-lines file's STRUCT): written as names are.
    const entries = (f.columns ?? []).map((c) => `${inPrompt(quoteIdentifier(c.name))} ${inPrompt(c.type)}`);
    const more = (n: number) => `… and ${n} more (describe_data_file lists them)`;
    // A summary may list fewer columns than the file has (DataFileSummary): the rest are counted.
    const total = Math.max(f.column_count ?? entries.length, entries.length);
    let used = bytes(head);
    for (const [i, entry] of entries.entries()) {
      const rest = total - i - 1;
      const needed = bytes(entry) + (rest > 0 ? 2 + bytes(more(rest)) : 0);
      if (used + needed > share) return `${head}${[...entries.slice(0, i), more(total - i)].join(", ")}`;
      used += bytes(entry) + 2;
    }
    return `${head}${[...entries, ...(total > entries.length ? [more(total - entries.length)] : [])].join(", ")}`;
  };
  const lines = [heading];
  let total = textTokens(heading);
  for (const [i, f] of data.entries()) {
    const next = line(f);
    const rest = `… and ${data.length - i} more data files (list_files lists them)`;
    if (total + textTokens(next) + (i < data.length - 1 ? textTokens(rest) : 0) > budgetTokens) {
      lines.push(rest);
      break;
    }
    lines.push(next);
    total += textTokens(next) + 1;
  }
  return lines.join("\n");
}

/** A name as a query can always write it, whatever its script or a keyword it equals: in double quotes. */
const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * A name from a file (its own, its columns') as the prompt shows it: on one line, in its order.
 * Control characters, line separators and bidirectional controls are written as `\u{…}`, so a
 * column named with a line break cannot write a prompt line of its own.
 */
const inPrompt = (name: string) =>
  name.replace(
    /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
    (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`,
  );

/** A ready data file as the engine reads it. */
const tableRef = (f: FileRecord): TableRef => ({
  name: f.table!,
  key: f.key,
  format: f.format!,
  ...(f.encoding ? { encoding: f.encoding } : {}),
});

/**
 * The files a query names, as the engine's tables: a table's name as a word of the query, quoted
 * or not, in any case (DuckDB's comparison; table names are letters, marks, digits and "_"), but
 * not inside a string or a comment, nor called as a function (`count(*)`). Each named file is
 * copied into the engine's memory for the query, so naming rather than holding them all keeps a
 * session of many large files queryable. A table reached without its name (query_table('x')) is
 * not found, and the error lists the session's tables.
 */
function namedIn(sql: string, files: FileRecord[]): FileRecord[] {
  const words = new Set([...referencedWords(sql.normalize("NFC"))].map((w) => w.toLowerCase()));
  return files.filter((f) => words.has(f.table!.toLowerCase()));
}

/**
 * The identifiers of a SQL text outside its strings ('…', $tag$…$tag$) and comments (--, nested
 * /* *\/), but for those followed by "(" (function calls). Hand-written: DuckDB's own parser is in
 * the data function, and a scanner this small keeps the chat function free of it; a word it misses
 * only makes the query fail with the session's tables listed.
 */
function* referencedWords(sql: string): Generator<string> {
  const word = /[\p{L}\p{M}\p{N}_]/u;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'") {
      i = sql.indexOf("'", i + 1);
      while (i !== -1 && sql[i + 1] === "'") i = sql.indexOf("'", i + 2);
      i = i === -1 ? sql.length : i + 1;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        const step = sql.startsWith("/*", i) ? 1 : sql.startsWith("*/", i) ? -1 : 0;
        depth += step;
        i += step === 0 ? 1 : 2;
      }
    } else if (c === "$" && /^\$[A-Za-z_]*\$/.test(sql.slice(i, i + 64))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end === -1 ? sql.length : end + tag.length;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1); // a table name never holds a quote
      if (end === -1) return;
      yield sql.slice(i + 1, end);
      i = end + 1;
    } else if (word.test(c)) {
      const start = i;
      while (i < sql.length && word.test(sql[i]!)) i++;
      if (!/^\s*\(/.test(sql.slice(i, i + 64))) yield sql.slice(start, i);
    } else i++;
  }
}

/** Runs a tool body: a SqlError is the model's to fix, anything else is reported and hidden. */
async function run(deps: DataFileDeps, name: string, body: () => Promise<Record<string, unknown>>) {
  try {
    return JSON.stringify(await body());
  } catch (err) {
    if (err instanceof SqlError) return JSON.stringify({ success: false, error: err.message });
    deps.onError?.(name, err);
    return JSON.stringify({ success: false, error: "The session's files are unavailable right now." });
  }
}

export function listFilesTool(deps: DataFileDeps) {
  return tool(
    async (_input, config) =>
      run(deps, "list_files", async () => ({
        success: true,
        files: (await sessionFiles(deps, config)).map((f) => ({
          name: f.name,
          kind: f.kind,
          media_type: f.media_type,
          bytes: f.bytes,
          ...(f.kind === "data" ? { table: f.table, row_count: f.row_count } : { width: f.width, height: f.height }),
        })),
      })),
    {
      name: "list_files",
      metadata: switchMetadata({ group: "files" }),
      description:
        "List the files the user attached to this session: data files (CSV, TSV, JSON lines, Parquet) and images.",
      schema: z.object({}),
    },
  );
}

export function describeDataFileTool(deps: DataFileDeps) {
  return tool(
    async ({ file }, config) =>
      run(deps, "describe_data_file", async () => {
        const files = (await sessionFiles(deps, config)).filter((f) => f.kind === "data");
        // The name as written first: two files may differ only in case (sales.csv, Sales.csv).
        const given = file.trim();
        const wanted = given.toLowerCase();
        const exact = files.find((f) => f.name === given || f.table === wanted);
        const loose = files.filter((f) => f.name.toLowerCase() === wanted);
        if (!exact && loose.length > 1)
          throw new SqlError(
            `${given} could be ${loose.map((f) => `${f.name} (table ${quoteIdentifier(f.table!)})`).join(" or ")}: name one exactly`,
          );
        const match = exact ?? loose[0];
        if (!match)
          throw new SqlError(
            `no data file named ${file} in this session${files.length ? `; there are: ${files.map((f) => f.name).join(", ")}` : ""}`,
          );
        const described = await deps.engine.describe({ table: tableRef(match), limits: deps.limits });
        return { success: true, file: match.name, ...described };
      }),
    {
      name: "describe_data_file",
      metadata: { [OFFLINE_HINT]: DESCRIBE_HINT, ...switchMetadata({ group: "files" }) },
      description:
        "Describe one of the session's data files: its columns with inferred types, row count and a few sample rows.",
      schema: z.object({
        file: z
          .string()
          .check(
            z.trim(),
            z.minLength(1),
            z.maxLength(255),
            z.describe("The file name (e.g. sales.csv) or its table."),
          ),
      }),
    },
  );
}

export function queryDataTool(deps: DataFileDeps) {
  return tool(
    async ({ sql }, config) =>
      run(deps, "query_data", async () => {
        const files = (await sessionFiles(deps, config)).filter((f) => f.kind === "data");
        if (files.length === 0) throw new SqlError("this session has no data files to query");
        const result = await deps.engine
          .query({ tables: namedIn(sql, files).map(tableRef), sql, limits: deps.limits })
          .catch((err: unknown) => {
            // Only the named files are loaded, so DuckDB's "Did you mean" has none of them to offer.
            if (err instanceof SqlError && /does not exist/i.test(err.message))
              throw new SqlError(
                `${err.message.replace(/\s*Did you mean.*$/s, "")} This session's tables: ${files.map((f) => quoteIdentifier(f.table!)).join(", ")}`,
              );
            throw err;
          });
        return {
          success: true,
          ...result,
          ...(result.truncated
            ? {
                note: `only the first ${result.rows.length} rows are shown (at most ${deps.limits.maxRows} rows and ${Math.round(deps.limits.maxResultBytes / 1024)} KB); aggregate, select fewer columns or add LIMIT for the rest`,
              }
            : {}),
          ...(result.cut_cells ? { cells_note: `text cells are cut at ${deps.limits.maxCellChars} characters` } : {}),
        };
      }),
    {
      name: "query_data",
      metadata: { [OFFLINE_HINT]: QUERY_HINT, ...switchMetadata({ group: "files" }) },
      description:
        "Run one read-only SQL SELECT (DuckDB dialect) over the session's data files; each file is a table " +
        "named as listed in the prompt (quoted as shown). Filter, aggregate, group and join. Results are capped in rows and bytes.",
      schema: z.object({
        sql: z.string().check(z.trim(), z.minLength(1), z.maxLength(10_000), z.describe("One SELECT statement.")),
      }),
    },
  );
}

export function dataFileTools(deps: DataFileDeps) {
  return [listFilesTool(deps), describeDataFileTool(deps), queryDataTool(deps)];
}
