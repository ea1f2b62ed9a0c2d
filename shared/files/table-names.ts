import { UNQUOTED_TABLE_KEYWORDS } from "./sql-keywords";

/** Longer names are cut: Postgres's identifier length, a name still readable in a prompt. */
const MAX_TABLE_NAME = 63;

/**
 * "Sales Q1.csv" -> sales_q1: the file name without its extension, lower-cased, each run of
 * anything but letters (of any script), marks and digits made one "_". Letters stay: an ASCII-only
 * rule turned every Cyrillic or Greek name into the same "t_", and two such files broke every
 * query of their session. DuckDB takes such names unquoted, and compares names case-insensitively.
 * A name that would start with a digit, or be one of DuckDB's keywords ("order.csv"), is prefixed
 * "t_", so every table can be written unquoted.
 */
export function tableName(fileName: string): string {
  const base = fileName
    .normalize("NFC")
    .replace(/\.[^.]*$/, "")
    .toLowerCase();
  const name = Array.from(base.replace(/[^\p{L}\p{M}\p{N}_]+/gu, "_").replace(/^_+|_+$/g, ""))
    .slice(0, MAX_TABLE_NAME)
    .join("")
    .replace(/_+$/, "");
  if (name === "") return "t";
  return /^[\p{L}_]/u.test(name) && !UNQUOTED_TABLE_KEYWORDS.has(name) ? name : `t_${name}`;
}

export interface NamedFile {
  file_id: string;
  name: string;
  created_at: string;
  /** the name the file was given when it was checked, if any */
  table?: string;
}

/**
 * A table name for each of a session's data files, unique within the session (case-insensitively,
 * as DuckDB compares them): the files already named keep their names, in the order they were
 * added, then the others take their file's name, and a file whose name is taken gets _2, _3...
 * `sales.csv` beside `Sales.tsv` made the same table twice, and the session's every query failed.
 * The same files always get the same names, so the prompt, the tools and the files list agree, and
 * a file checked later never takes the name of one named before it.
 */
export function assignTableNames(files: readonly NamedFile[]): Map<string, string> {
  const ordered = [...files].sort(
    (a, b) =>
      Number(a.table === undefined) - Number(b.table === undefined) ||
      a.created_at.localeCompare(b.created_at) ||
      a.file_id.localeCompare(b.file_id),
  );
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const file of ordered) {
    let name = (file.table ?? tableName(file.name)).toLowerCase();
    if (taken.has(name)) {
      const base = tableName(file.name);
      let n = 2;
      while (taken.has(`${base}_${n}`)) n++;
      name = `${base}_${n}`;
    }
    taken.add(name);
    names.set(file.file_id, name);
  }
  return names;
}

/** A session's files, each ready data file with its table name from assignTableNames. */
export function withTableNames<F extends NamedFile & { kind: string; status: string }>(files: readonly F[]): F[] {
  const names = assignTableNames(files.filter((f) => f.kind === "data" && f.status === "ready"));
  return files.map((f) => (names.has(f.file_id) ? { ...f, table: names.get(f.file_id)! } : f));
}
