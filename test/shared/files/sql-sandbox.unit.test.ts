import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SQL_LIMITS, SqlError, SqlSandbox } from "../../../shared/files/sql-sandbox";
import { tableName } from "../../../shared/files/table-names";

const dir = mkdtempSync(join(tmpdir(), "sql-sandbox-"));
const salesCsv = join(dir, "sales.csv");
writeFileSync(
  salesCsv,
  "region,amount,day\nnorth,10.5,2024-01-01\nsouth,3,2024-01-02\nnorth,4.5,2024-01-03\neast,7,2024-01-04\n",
);
const secret = join(dir, "secret.csv");
writeFileSync(secret, "password\nhunter2\n");

let sandbox: SqlSandbox;
beforeAll(async () => {
  sandbox = await SqlSandbox.open([{ name: "sales", path: salesCsv, format: "csv" }], {
    ...DEFAULT_SQL_LIMITS,
    timeoutMs: 1_000,
    memoryLimitMb: 64,
    maxRows: 3,
    maxFileRows: 1_000,
  });
});
afterAll(() => sandbox.close());

describe("SqlSandbox", () => {
  it("answers a column named like an object's own machinery with its value", async () => {
    const out = await sandbox.query(`SELECT 1 AS "__proto__", 'a' AS "constructor", 2 AS x;`);
    expect(JSON.parse(JSON.stringify(out.rows))).toEqual([
      JSON.parse('{"__proto__":1,"constructor":"a","x":2}') as Record<string, unknown>,
    ]);
    expect(Object.keys(out.rows[0]!)).toEqual(["__proto__", "constructor", "x"]);
  });

  it("answers a group-by over a data file", async () => {
    const out = await sandbox.query("SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region;");
    expect(out.rows).toEqual([
      { region: "east", total: 7 },
      { region: "north", total: 15 },
      { region: "south", total: 3 },
    ]);
    expect(out.truncated).toBe(false);
  });

  it("describes a table: inferred types, row count, sample rows", async () => {
    const d = await sandbox.describe("sales", 2);
    expect(d.columns).toEqual([
      { name: "region", type: "VARCHAR" },
      { name: "amount", type: "DOUBLE" },
      { name: "day", type: "DATE" },
    ]);
    expect(d.row_count).toBe(4);
    expect(d.sample_rows).toHaveLength(2);
  });

  it("cuts results at the row cap and says so", async () => {
    const out = await sandbox.query("SELECT * FROM range(10)");
    expect(out.rows).toHaveLength(3);
    expect(out.truncated).toBe(true);
  });

  const escapes: [string, string, RegExp][] = [
    ["COPY TO", `COPY sales TO '${join(dir, "out.csv")}'`, /disabled|only SELECT/i],
    ["read_csv of another file", "SELECT * FROM read_csv('/etc/passwd')", /disabled/i],
    ["read_csv of a file beside the session's", `SELECT * FROM read_csv('${secret}')`, /disabled/i],
    ["ATTACH", `ATTACH '${join(dir, "other.db")}' AS other`, /disabled|only SELECT|lock|not allowed/i],
    ["INSTALL", "INSTALL httpfs", /only SELECT|disabled|not allowed/i],
    ["LOAD", "LOAD httpfs", /only SELECT|disabled|not allowed/i],
    ["PRAGMA", "PRAGMA threads = 8", /only SELECT|lock|disabled|not allowed/i],
    ["PRAGMA that reads", "PRAGMA database_list", /only SELECT/i],
    ["SET", "SET enable_external_access = true", /only SELECT|lock/i],
    ["a write", "DELETE FROM sales", /only SELECT/i],
    ["multiple statements", "SELECT 1; COPY sales TO '/tmp/x.csv'", /only one statement/i],
    ["network", "SELECT * FROM read_csv('https://example.com/x.csv')", /disabled|not allowed|extension/i],
    [
      "exploding cross join",
      "SELECT count(*) FROM range(100000) a, range(100000) b, range(100000) c",
      /stopped after|memory/i,
    ],
    ["a query that never ends", "SELECT count(*) FROM range(1000000000000000) t(x) WHERE x % 7 = 3", /stopped after/i],
  ];
  for (const [what, sql, message] of escapes) {
    it(`refuses ${what} with a clear error, and keeps working`, async () => {
      const error = await sandbox.query(sql).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SqlError);
      expect((error as Error).message).toMatch(message);
      const after = await sandbox.query("SELECT count(*)::INT AS n FROM sales");
      expect(after.rows).toEqual([{ n: 4 }]);
    });
  }

  it("wrote no file while refusing", () => {
    expect(existsSync(join(dir, "out.csv"))).toBe(false);
    expect(existsSync(join(dir, "other.db"))).toBe(false);
  });

  it("names tables after files", () => {
    expect(tableName("Sales Q1.csv")).toBe("sales_q1");
    expect(tableName("2024.tsv")).toBe("t_2024");
  });
});
