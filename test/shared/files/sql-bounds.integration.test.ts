import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL_ERROR_MAX_CHARS, SqlError } from "../../../shared/files/sql-errors";
import { DEFAULT_SQL_LIMITS, SqlSandbox, type SqlLimits } from "../../../shared/files/sql-sandbox";
import { isStorableText } from "../../../shared/text";
import { assignTableNames, tableName } from "../../../shared/files/table-names";

// SQL over data files is bounded by construction: what a query returns (bytes and rows), how
// many queries run at once in the process, and the names it sees are unique per session.

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sql-bounds-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const limits: SqlLimits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 2_000, maxResultBytes: 64 * 1024, maxCellChars: 1_000 };

describe("a query's error is bounded as its result is", () => {
  // A probe's finding: DuckDB puts the query's own values in its messages (error(x), a failed
  // CAST of x), and a 29 MB message went to the model and into the checkpoint whole.
  it("says at most SQL_ERROR_MAX_CHARS characters, and how long it was", async () => {
    for (const sql of ["SELECT error(repeat('x', 100000))", "SELECT CAST(repeat('😀', 50000) AS INTEGER)"]) {
      const err = await SqlSandbox.run([], limits, (s) => s.query(sql)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SqlError);
      const { message } = err as SqlError;
      expect(message.length).toBeLessThanOrEqual(SQL_ERROR_MAX_CHARS + 80);
      expect(message).toMatch(/… \(cut: the whole message was [\d,]+ KB\)$/);
      expect(isStorableText(message)).toBe(true);
    }
  });

  // DuckDB's interrupt is not checked inside one function call, and the query's first planning
  // (checking that it is a SELECT) ran before the timer: a call that took a little under the limit
  // to plan, twice, was answered as if in time (a probe: 10.2 s against 5 s).
  it("counts all of a query's time against its limit", async () => {
    const sql = "SELECT length(repeat('ab', 60000000)) AS n";
    let started = Date.now();
    await SqlSandbox.run([], limits, (s) => s.query(sql)).catch(() => undefined);
    const timeoutMs = Math.round((Date.now() - started) * 0.6);
    started = Date.now();
    const err = await SqlSandbox.run([], { ...limits, timeoutMs }, (s) => s.query(sql)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SqlError);
    expect((err as SqlError).message).toBe(`the query was stopped after ${timeoutMs} ms`);
  });

  it("keeps a short one whole", async () => {
    const err = await SqlSandbox.run([], limits, (s) => s.query("SELECT error('no such thing')")).catch((e) => e);
    expect((err as SqlError).message).toBe("Invalid Input Error: no such thing");
  });
});

describe("query results are bounded by bytes as well as rows", () => {
  it("200 rows of 1 MB cells come back cut to the byte cap, each cell cut, and say so", async () => {
    const out = await SqlSandbox.run([], limits, (s) =>
      s.query("SELECT i, repeat('x', 1000000) AS c FROM range(200) t(i)"),
    );
    expect(Buffer.byteLength(JSON.stringify(out.rows))).toBeLessThanOrEqual(limits.maxResultBytes);
    expect(out.rows.length).toBeGreaterThan(0);
    expect(out.rows.length).toBeLessThan(200);
    expect(String(out.rows[0]!.c).length).toBeLessThanOrEqual(limits.maxCellChars + 1);
    expect(out.truncated).toBe(true);
    expect(out.cut_cells).toBe(true);
  });

  it("keeps small results whole, in their order, with the row cap as before", async () => {
    const out = await SqlSandbox.run([], { ...limits, maxRows: 3 }, (s) =>
      s.query("SELECT i::INTEGER AS i FROM range(10) t(i) ORDER BY i DESC -- newest first"),
    );
    expect(out.rows).toEqual([{ i: 9 }, { i: 8 }, { i: 7 }]);
    expect(out.truncated).toBe(true);
    const whole = await SqlSandbox.run([], limits, (s) => s.query("WITH t AS (SELECT 1 AS a) SELECT a FROM t"));
    expect(whole).toMatchObject({ rows: [{ a: 1 }], truncated: false });
  });

  // The rows were bounded and the column list was not: `SELECT *,*,… LIMIT 0` over a wide file
  // answered 1.28 MB of column names, past any model's context.
  it("counts the column list in the byte cap, and refuses a result whose columns alone are over it", async () => {
    const wide = `SELECT ${Array.from({ length: 400 }, (_, i) => `1 AS "${"c".repeat(200)}${i}"`).join(", ")}`;
    await expect(SqlSandbox.run([], limits, (s) => s.query(`${wide} LIMIT 0`))).rejects.toThrow(
      /the result's 400 columns take \d+ KB to list; at most 64 KB/,
    );
    const out = await SqlSandbox.run([], limits, (s) =>
      s.query(
        `SELECT ${Array.from({ length: 100 }, (_, i) => `repeat('x', 300) AS "${"c".repeat(200)}${i}"`).join(", ")} FROM range(50)`,
      ),
    );
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(limits.maxResultBytes + 200);
    expect(out.truncated).toBe(true);
  });

  it("bounds describe's sample rows the same way", async () => {
    const big = join(dir, "big.csv");
    writeFileSync(big, `k,v\n${Array.from({ length: 5 }, (_, i) => `${i},${"y".repeat(50_000)}`).join("\n")}\n`);
    const described = await SqlSandbox.run([{ name: "big", path: big, format: "csv" }], limits, (s) =>
      s.describe("big", 5),
    );
    expect(Buffer.byteLength(JSON.stringify(described.sample_rows))).toBeLessThanOrEqual(limits.maxResultBytes);
    expect(String(described.sample_rows[0]!.v).length).toBeLessThanOrEqual(limits.maxCellChars + 1);
  });
});

describe("SQL concurrency is bounded", () => {
  it("four runaway queries at once leave the thread pool to the rest of the process", async () => {
    const events: string[] = [];
    const runaway = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b";
    const queries = Array.from({ length: 4 }, () =>
      SqlSandbox.run([], { ...limits, timeoutMs: 5_000 }, (s) => s.query(runaway))
        .catch(() => undefined)
        .then(() => events.push("query")),
    );
    await new Promise((r) => setTimeout(r, 1_500)); // the engine is loaded and the queries are running
    await stat(dir).then(() => events.push("stat")); // a libuv thread-pool task, as every fs call is
    await Promise.all(queries);
    expect(events[0]).toBe("stat");
  }, 30_000);

  it("a query that waits too long for its turn is told the engine is busy", async () => {
    const one = { ...limits, concurrency: 1, timeoutMs: 1_500 };
    const runaway = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b";
    const results = await Promise.allSettled(
      Array.from({ length: 3 }, () => SqlSandbox.run([], one, (s) => s.query(runaway))),
    );
    const messages = results.map((r) => (r.status === "rejected" ? String(r.reason.message) : "ok"));
    expect(messages.some((m) => /busy/.test(m))).toBe(true);
    expect(messages.some((m) => /stopped after/.test(m))).toBe(true);
  }, 30_000);
});

describe("table names", () => {
  it("keep letters of any script and refuse nothing but separators", () => {
    expect(tableName("Sales Q1.csv")).toBe("sales_q1");
    expect(tableName("2024.tsv")).toBe("t_2024");
    expect(tableName("продажи.csv")).toBe("продажи");
    expect(tableName("données 2024.csv")).toBe("données_2024");
    expect(tableName("...csv")).toBe("t");
  });

  it("a file named as one of DuckDB's keywords gets a name a query can write unquoted (order.csv is t_order)", async () => {
    expect(tableName("order.csv")).toBe("t_order");
    expect(tableName("Left.csv")).toBe("t_left");
    expect(tableName("orders.csv")).toBe("orders");
    // Every keyword DuckDB knows, as a file name: its table is named unquoted, as the prompt shows it.
    const keywords = await SqlSandbox.run([], { ...limits, maxRows: 10_000 }, (s) =>
      s.query("SELECT keyword_name AS k FROM duckdb_keywords()"),
    );
    const names = keywords.rows.map((r) => String(r.k));
    expect(names.length).toBeGreaterThan(400);
    const path = join(dir, "keyword.csv");
    writeFileSync(path, "n\n1\n");
    const unusable: string[] = [];
    await SqlSandbox.run(
      names.map((k) => ({ name: tableName(`${k}.csv`), path, format: "csv" as const })),
      { ...limits, maxRows: 10 },
      async (s) => {
        for (const k of names) {
          const out = await s
            .query(`SELECT n FROM ${tableName(`${k}.csv`)} WHERE n = 1 ORDER BY n`)
            .catch(() => undefined);
          if (out?.rows.length !== 1) unusable.push(k);
        }
      },
    );
    expect(unusable).toEqual([]);
  }, 60_000);

  it("are unique within a session, case-insensitively (sales.csv beside Sales.tsv); a named file keeps its name", () => {
    const at = (i: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString();
    const files = [
      { file_id: "b", name: "Sales.tsv", created_at: at(2) },
      { file_id: "a", name: "sales.csv", created_at: at(1) },
      { file_id: "c", name: "SALES.csv", created_at: at(3), table: "sales" },
      { file_id: "d", name: "sales_2.csv", created_at: at(4) },
    ];
    expect(Object.fromEntries(assignTableNames(files))).toEqual({
      c: "sales", // named when it was checked: it keeps its name
      a: "sales_2",
      b: "sales_3",
      d: "sales_2_2",
    });
  });

  it("every file of a session is a table a query can name, whatever the names", async () => {
    const names = ["sales.csv", "Sales.tsv", "продажи.csv", "клиенты.csv", "select.csv"];
    const files = names.map((name, i) => ({ file_id: String(i), name, created_at: String(i) }));
    const assigned = assignTableNames(files);
    const tables = names.map((name, i) => {
      const path = join(dir, `t${i}`);
      writeFileSync(path, name.endsWith(".tsv") ? `n\n${i}\n` : `n\n${i}\n`);
      return { name: assigned.get(String(i))!, path, format: "csv" as const };
    });
    const out = await SqlSandbox.run(tables, limits, (s) =>
      s.query(`${tables.map((t) => `SELECT n::INTEGER AS n FROM "${t.name}"`).join(" UNION ALL ")} ORDER BY n`),
    );
    expect(out.rows).toEqual(names.map((_, i) => ({ n: i })));
  });
});
