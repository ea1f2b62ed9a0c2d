import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessEngine } from "../../../shared/files/data-core";
import { inspectData } from "../../../shared/files/data-inspect";
import { ACCEPTED_MEDIA_TYPES, formatOf } from "../../../shared/files/inspect";
import { DEFAULT_SQL_LIMITS } from "../../../shared/files/sql-errors";

// JSON lines and Parquet data files, inspected and queried as CSV is: by their bytes, through the
// same engine, with the same bounds; a file that is not what it claims is refused with its reason.
const JSONL = "application/jsonl";
const PARQUET = "application/vnd.apache.parquet";
const limits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 3_000 };
const enc = (s: string) => new TextEncoder().encode(s);
let dir: string;
let parquet: Uint8Array;

beforeAll(async () => {
  // A Parquet file as a data tool would get one: written by DuckDB itself, outside the sandbox.
  dir = mkdtempSync(join(tmpdir(), "parquet-"));
  const c = await (await DuckDBInstance.create(":memory:")).connect();
  await c.run(
    `COPY (SELECT * FROM (VALUES ('north', 1.5), ('south', 2.5), ('north', 3.0)) t(region, amount)) TO '${join(dir, "sales.parquet")}' (FORMAT parquet)`,
  );
  c.closeSync();
  parquet = new Uint8Array(readFileSync(join(dir, "sales.parquet")));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("JSON lines and Parquet", () => {
  it("are accepted media types with their formats", () => {
    expect(ACCEPTED_MEDIA_TYPES).toEqual(expect.arrayContaining([JSONL, "application/x-ndjson", PARQUET]));
    expect([formatOf(JSONL), formatOf("application/x-ndjson"), formatOf(PARQUET)]).toEqual([
      "jsonl",
      "jsonl",
      "parquet",
    ]);
  });

  it("inspects a JSON lines file: its keys are the columns", async () => {
    const bytes = enc('{"region":"north","amount":1}\n{"region":"south","amount":2,"note":"late"}\n');
    expect(await inspectData(bytes, { name: "sales.jsonl", media_type: JSONL }, 100, limits)).toMatchObject({
      ok: true,
      format: "jsonl",
      table: "sales",
      row_count: 2,
      columns: [
        { name: "region", type: "VARCHAR" },
        { name: "amount", type: "BIGINT" },
        { name: "note", type: "VARCHAR" },
      ],
    });
  });

  it("inspects a Parquet file by its schema", async () => {
    expect(await inspectData(parquet, { name: "sales.parquet", media_type: PARQUET }, 100, limits)).toMatchObject({
      ok: true,
      format: "parquet",
      row_count: 3,
      columns: [
        { name: "region", type: "VARCHAR" },
        { name: "amount", type: expect.stringMatching(/DECIMAL|DOUBLE/) },
      ],
    });
  });

  it("queries both beside a CSV, joined in one statement", async () => {
    const objects: Record<string, Uint8Array> = {
      j: enc('{"region":"north","manager":"ann"}\n{"region":"south","manager":"bo"}\n'),
      p: parquet,
      c: enc("region,target\nnorth,4\nsouth,1\n"),
    };
    const engine = inProcessEngine(async (key) => objects[key]);
    const result = await engine.query({
      tables: [
        { name: "managers", key: "j", format: "jsonl" },
        { name: "sales", key: "p", format: "parquet" },
        { name: "targets", key: "c", format: "csv" },
      ],
      sql:
        "SELECT m.manager, SUM(s.amount)::DOUBLE AS total, ANY_VALUE(t.target)::INTEGER AS target FROM sales s " +
        "JOIN managers m USING (region) JOIN targets t USING (region) GROUP BY m.manager ORDER BY m.manager",
      limits,
    });
    expect(result.rows).toEqual([
      { manager: "ann", total: 4.5, target: 4 },
      { manager: "bo", total: 2.5, target: 1 },
    ]);
  });

  it("refuses hostile or mislabelled files with their reason", async () => {
    const check = (bytes: Uint8Array, media_type: string, maxRows = 100) =>
      inspectData(bytes, { name: "x", media_type }, maxRows, limits);
    // Not JSON at all, a JSON array (not lines), binary, and over the row limit.
    expect(await check(enc("region,amount\nnorth,1\n"), JSONL)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not a readable JSON lines file/),
    });
    expect(await check(enc('{"a":1}\n{"a":'), JSONL)).toMatchObject({ ok: false });
    expect(await check(new Uint8Array([0x7b, 0, 0x7d]), JSONL)).toMatchObject({ ok: false, reason: /NUL/ });
    expect(await check(enc('{"a":1}\n'.repeat(11)), JSONL, 10)).toMatchObject({
      ok: false,
      reason: /more than 10 rows/,
    });
    // A CSV called Parquet, a Parquet cut short, Parquet's magic around garbage.
    expect(await check(enc("a,b\n1,2\n"), PARQUET)).toMatchObject({ ok: false, reason: /not a Parquet file/ });
    expect(await check(parquet.subarray(0, parquet.length - 10), PARQUET)).toMatchObject({ ok: false });
    const garbage = new Uint8Array([...enc("PAR1"), ...new Uint8Array(64).fill(0xff), ...enc("PAR1")]);
    expect(await check(garbage, PARQUET)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not a readable Parquet file/),
    });
    expect(await check(parquet, PARQUET, 2)).toMatchObject({ ok: false, reason: /more than 2 rows/ });
  });

  // A 4 KB line nested 2,000 levels deep held the engine for 16 s (the hard limit: DuckDB's schema
  // inference does not stop for the query's time limit), and with it every user's data requests.
  it("refuses a JSON lines file nested deeper than 64 levels before the engine reads it", async () => {
    const deep = `{"a":1,"b":${"[".repeat(2000)}1${"]".repeat(2000)}}\n`;
    expect(await inspectData(enc(deep), { name: "x", media_type: JSONL }, 100, limits)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/deeper than 64 levels/),
    });
    const fine = `{"a":1,"b":${"[".repeat(60)}1${"]".repeat(60)}}\n`;
    expect(await inspectData(enc(fine), { name: "x", media_type: JSONL }, 100, limits)).toMatchObject({ ok: true });
  });

  it("reads no other file from a query over them: the sandbox's external access stays off", async () => {
    const engine = inProcessEngine(async () => parquet);
    await expect(
      engine.query({
        tables: [{ name: "sales", key: "p", format: "parquet" }],
        sql: `SELECT * FROM read_parquet('${join(dir, "sales.parquet")}')`,
        limits,
      }),
    ).rejects.toThrow(/disabled|not allowed|permission/i);
  });
});
