import { describeDataFileTool, queryDataTool, type DataFileDeps } from "../../../graph/tools/data-files";
import type { TableRef } from "../../../shared/files/data-engine";
import type { FileRecord } from "../../../shared/files/records";
import { DEFAULT_SQL_LIMITS, SqlError } from "../../../shared/files/sql-errors";

// Every ready file of the session was copied into the engine for every query, so eleven accepted
// 20 MB files made even `SELECT 1` run out of SQL_MEMORY_MB. A query now loads the files it names.

const file = (name: string, table: string, at: number): FileRecord => ({
  file_id: `${name}-id`,
  session_id: "s",
  user_id: "u",
  name,
  media_type: "text/csv",
  bytes: 20_000_000,
  kind: "data",
  status: "ready",
  key: `users/u/sessions/s/${name}`,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
  table,
  format: "csv",
  columns: [{ name: "a", type: "BIGINT" }],
  row_count: 1,
});

function depsLoading(loaded: TableRef[][], fail?: Error): DataFileDeps {
  return {
    records: {
      list: async () => [
        file("sales.csv", "sales", 1),
        file("Sales.tsv", "sales", 2), // named sales_2 by the session's order
        file("продажи.csv", "продажи", 3),
        file("order.csv", "order", 4), // a keyword: loaded by any query that writes the word
        file("big.csv", "big", 5),
        file("count.csv", "count", 6), // a function's name: count(*) is not the table
      ],
    },
    engine: {
      query: async ({ tables }: { tables: TableRef[] }) => {
        loaded.push(tables);
        if (fail) throw fail;
        return { columns: [], rows: [], truncated: false };
      },
    },
    limits: DEFAULT_SQL_LIMITS,
  } as unknown as DataFileDeps;
}

const scope = { configurable: { user_id: "u", session_id: "s" } };

async function tablesLoadedFor(sql: string): Promise<string[]> {
  const loaded: TableRef[][] = [];
  await queryDataTool(depsLoading(loaded)).invoke({ sql }, scope);
  return loaded[0]!.map((t) => t.name).sort();
}

it("loads only the files a query names, however it writes their names", async () => {
  expect(await tablesLoadedFor("SELECT 1")).toEqual([]);
  expect(await tablesLoadedFor("SELECT region FROM sales")).toEqual(["sales"]);
  expect(await tablesLoadedFor('select * from "SALES_2" join Продажи using (a)')).toEqual(["sales_2", "продажи"]);
  expect(await tablesLoadedFor(`SELECT * FROM "order", sales\nWHERE 1`)).toEqual(["order", "sales"]);
  expect(await tablesLoadedFor("SELECT * FROM sales_2")).toEqual(["sales_2"]);
  expect(await tablesLoadedFor("SELECT * FROM bigger")).toEqual([]);
});

// A name in a string, in a comment, or called as a function loaded its file for nothing: a
// session holding count.csv loaded it for every count(*), and naming every table in a comment
// brought back the out-of-memory the loading by name was for.
it("does not load a file for a name in a string, a comment or a function call", async () => {
  expect(await tablesLoadedFor("SELECT count(*) FROM sales -- not big")).toEqual(["sales"]);
  expect(await tablesLoadedFor("SELECT 'big' AS label, COUNT (a) FROM /* big, order */ sales")).toEqual(["sales"]);
  expect(await tablesLoadedFor("SELECT $$big$$, 'it''s big' FROM sales")).toEqual(["sales"]);
  expect(await tablesLoadedFor('SELECT "a--b" FROM sales, count')).toEqual(["count", "sales"]);
  expect(await tablesLoadedFor("SELECT * FROM /* a /* nested */ big */ sales")).toEqual(["sales"]);
});

// With only the named files loaded, DuckDB's "Did you mean" for a misspelt table has nothing of
// the session's to suggest: the error names the session's tables instead.
it("names the session's tables when a query names one that does not exist", async () => {
  const failure = new SqlError('Catalog Error: Table with name salez does not exist!\nDid you mean "pg_tablespace"?');
  const out = JSON.parse(
    String(await queryDataTool(depsLoading([], failure)).invoke({ sql: "SELECT * FROM salez" }, scope)),
  );
  expect(out).toMatchObject({ success: false });
  expect(out.error).toMatch(
    /^Catalog Error: Table with name salez does not exist! This session's tables: "sales", "sales_2", "продажи", "order", "big", "count"$/,
  );
});

// Two files whose names differ only in case: the first case-insensitive match was described, so
// "Sales.csv" was answered with sales.csv's columns.
it("describes the file named exactly, and asks which when only the case tells them apart", async () => {
  const described: string[] = [];
  const deps = {
    records: { list: async () => [file("sales.csv", "sales", 1), file("Sales.csv", "sales", 2)] },
    engine: {
      describe: async ({ table: t }: { table: TableRef }) => {
        described.push(t.name);
        return { table: t.name, columns: [], row_count: 0, sample_rows: [] };
      },
    },
    limits: DEFAULT_SQL_LIMITS,
  } as unknown as DataFileDeps;
  const ask = async (name: string) =>
    JSON.parse(String(await describeDataFileTool(deps).invoke({ file: name }, scope))) as {
      success: boolean;
      error?: string;
    };
  expect(await ask("Sales.csv")).toMatchObject({ success: true });
  expect(await ask("sales.csv")).toMatchObject({ success: true });
  expect(await ask("sales_2")).toMatchObject({ success: true });
  expect(described).toEqual(["sales_2", "sales", "sales_2"]);
  expect(await ask("SALES.CSV")).toMatchObject({
    success: false,
    error: expect.stringMatching(/SALES\.CSV could be sales\.csv \(table "sales"\) or Sales\.csv \(table "sales_2"\)/),
  });
});
