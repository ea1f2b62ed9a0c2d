import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  claimedKind,
  columnListProblem,
  formatOf,
  inspectImage,
  textOf,
  type Inspection,
  type TextEncoding,
} from "./inspect";
import { DEFAULT_SQL_LIMITS, SqlBusy, SqlEngineUnavailable, SqlSandbox, type SqlLimits } from "./sql-sandbox";
import { jsonDepth, MAX_JSON_DEPTH } from "../json-text";
import { scratchDir } from "./scratch";
import { tableName } from "./table-names";

const PARQUET_MAGIC = new TextEncoder().encode("PAR1");
const startsWith = (bytes: Uint8Array, magic: Uint8Array, at = 0) => magic.every((b, i) => bytes[at + i] === b);

/**
 * Checks a data file by its bytes, in the SQL engine (so only the data function runs it, or the
 * local stack's worker pool): CSV, TSV and JSON lines must be text, UTF-8 or else read as
 * Windows-1252; Parquet must carry its magic at both ends. Each must load as a table of at most
 * maxRows rows whose columns can be kept.
 */
export async function inspectData(
  bytes: Uint8Array,
  claimed: { name: string; media_type: string },
  maxRows: number,
  limits: SqlLimits = DEFAULT_SQL_LIMITS,
): Promise<Inspection> {
  const format = formatOf(claimed.media_type);
  if (!format) return { ok: false, reason: `unsupported media type ${claimed.media_type}` };
  let encoding: TextEncoding | undefined;
  if (format === "parquet") {
    if (
      bytes.byteLength < 12 ||
      !startsWith(bytes, PARQUET_MAGIC) ||
      !startsWith(bytes, PARQUET_MAGIC, bytes.byteLength - 4)
    )
      return { ok: false, reason: "not a Parquet file (it does not begin and end with PAR1)" };
  } else {
    if (bytes.subarray(0, 8192).includes(0)) return { ok: false, reason: "not a text file (it holds NUL bytes)" };
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      encoding = "windows-1252";
    }
  }
  // Counted on the text first: DuckDB's schema inference over a deeply nested line does not stop
  // for the time limit, and held the engine (every user's data requests) until its hard limit.
  if (format === "jsonl" && jsonDepth(new TextDecoder(encoding ?? "utf-8").decode(bytes)) > MAX_JSON_DEPTH)
    return { ok: false, reason: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
  const table = tableName(claimed.name);
  const dir = scratchDir("inspect-");
  try {
    const path = join(dir, "data");
    writeFileSync(path, textOf(bytes, encoding));
    const described = await SqlSandbox.run(
      [{ name: table, path, format }],
      { ...limits, maxFileRows: maxRows + 1 },
      (sandbox) => sandbox.describe(table, 0),
    );
    if (described.row_count > maxRows) return { ok: false, reason: `more than ${maxRows} rows (FILES_MAX_ROWS)` };
    if (described.columns.length === 0) return { ok: false, reason: "no columns found" };
    const columnsProblem = columnListProblem(described.columns);
    if (columnsProblem) return { ok: false, reason: columnsProblem };
    return {
      ok: true,
      kind: "data",
      media_type: claimed.media_type,
      format,
      table,
      columns: described.columns,
      row_count: described.row_count,
      ...(encoding ? { encoding } : {}),
    };
  } catch (err) {
    if (err instanceof SqlBusy) throw err; // the engine's, not the file's: the check is tried again
    if (err instanceof SqlEngineUnavailable) return { ok: false, reason: err.message };
    const name = format === "jsonl" ? "JSON lines" : format === "parquet" ? "Parquet" : format.toUpperCase();
    return {
      ok: false,
      reason: `not a readable ${name} file: ${err instanceof Error ? err.message.split("\n")[0] : err}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Any accepted upload checked in this process: images by inspectImage, data files by inspectData. */
export async function inspectFile(
  bytes: Uint8Array,
  claimed: { name: string; media_type: string },
  maxRows: number,
  limits: SqlLimits = DEFAULT_SQL_LIMITS,
): Promise<Inspection> {
  const kind = claimedKind(claimed.media_type);
  if (kind === "image") return inspectImage(bytes);
  if (kind === "data") return inspectData(bytes, claimed, maxRows, limits);
  return { ok: false, reason: `unsupported media type ${claimed.media_type}` };
}
