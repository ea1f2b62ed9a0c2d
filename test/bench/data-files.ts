import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { inProcessEngine } from "../../shared/files/data-core";
import type { DataEngine } from "../../shared/files/data-engine";
import { DEFAULT_SQL_LIMITS } from "../../shared/files/sql-errors";
import { workerDataEngine } from "../../infra/local/data-worker";
import { median, printTable } from "./table";

/**
 * The SQL engine for data files, chosen by measurement: DuckDB (@duckdb/node-api, native),
 * SQLite as sql.js (wasm: node:sqlite needs Node 22 and this project supports Node 20), and
 * PGlite (Postgres in wasm, already a dependency for the local stack). Each run is a fresh
 * Node process, as a cold Lambda is: import the engine, load a 100,000-row, 10-column CSV,
 * run a group-by. "on disk" is what the engine adds to a function's bundle or layer.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const ROWS = 100_000;
const RUNS = 5;
const ENGINES = ["duckdb", "sqlite (sql.js)", "pglite"] as const;
type Engine = (typeof ENGINES)[number];

const COLUMNS =
  "id INTEGER, region VARCHAR, category VARCHAR, amount DOUBLE, qty INTEGER, price DOUBLE, day DATE, flag BOOLEAN, score DOUBLE, note VARCHAR";
const GROUP_BY =
  "SELECT region, SUM(amount) AS total, COUNT(*) AS n, AVG(price) AS avg_price FROM t GROUP BY region ORDER BY region";

function writeCsv(path: string) {
  const regions = ["north", "south", "east", "west", "central", "nordic", "iberia", "alps"];
  const lines = ["id,region,category,amount,qty,price,day,flag,score,note"];
  for (let i = 0; i < ROWS; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10);
    lines.push(
      [
        i,
        regions[i % 8],
        `cat${i % 37}`,
        ((i * 7919) % 10_000) / 100,
        i % 13,
        ((i * 31) % 500) / 10,
        day,
        i % 2 === 0,
        (i % 1000) / 7,
        `note ${i}`,
      ].join(","),
    );
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/** The child: one engine, one cold process; prints {importMs, loadMs, queryMs, rows}. */
async function child(engine: Engine, csv: string) {
  const t0 = performance.now();
  let load: () => Promise<void>;
  let query: () => Promise<unknown[]>;
  if (engine === "duckdb") {
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const db = await (await DuckDBInstance.create(":memory:", { threads: "1" })).connect();
    load = async () => void (await db.run(`CREATE TABLE t AS SELECT * FROM read_csv('${csv}', header = true)`));
    query = async () => (await db.runAndReadAll(GROUP_BY)).getRowObjectsJson();
  } else if (engine === "sqlite (sql.js)") {
    const initSqlJs = (await import("sql.js")).default;
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    load = async () => {
      // sql.js has no CSV reader: split in JS (this generated file has no quoted fields) and insert in one transaction.
      db.run(`CREATE TABLE t (${COLUMNS})`);
      const insert = db.prepare(`INSERT INTO t VALUES (${Array(10).fill("?").join(",")})`);
      db.run("BEGIN");
      const lines = readFileSync(csv, "utf8").split("\n");
      for (let i = 1; i < lines.length; i++) if (lines[i]) insert.run(lines[i]!.split(","));
      db.run("COMMIT");
      insert.free();
    };
    query = async () => db.exec(GROUP_BY)[0]!.values;
  } else {
    const { PGlite } = await import("@electric-sql/pglite");
    const pg = await PGlite.create();
    load = async () => {
      await pg.exec(`CREATE TABLE t (${COLUMNS.replace(/VARCHAR/g, "TEXT").replace(/DOUBLE/g, "DOUBLE PRECISION")})`);
      await pg.query("COPY t FROM '/dev/blob' WITH (FORMAT csv, HEADER true)", [], {
        blob: new Blob([readFileSync(csv)]),
      });
    };
    query = async () => (await pg.query(GROUP_BY)).rows;
  }
  const t1 = performance.now();
  await load();
  const t2 = performance.now();
  const rows = await query();
  const t3 = performance.now();
  console.log(JSON.stringify({ importMs: t1 - t0, loadMs: t2 - t1, queryMs: t3 - t2, rows: rows.length }));
}

function dirBytes(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, f) => sum + dirBytes(join(path, f)), 0);
}

/** What a function must ship for each engine: the packages, or for sql.js only the one build it loads. */
const ON_DISK: Record<Engine, string[]> = {
  duckdb: [
    "node_modules/@duckdb/node-api",
    "node_modules/@duckdb/node-bindings",
    "node_modules/@duckdb/node-bindings-linux-x64",
  ],
  "sqlite (sql.js)": ["node_modules/sql.js/dist/sql-wasm.js", "node_modules/sql.js/dist/sql-wasm.wasm"],
  pglite: ["node_modules/@electric-sql/pglite/dist"],
};

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "bench-data-files-"));
  try {
    const csv = join(dir, "data.csv");
    writeCsv(csv);
    const rows: Record<string, string | number>[] = [];
    for (const engine of ENGINES) {
      const runs = Array.from(
        { length: RUNS },
        () =>
          JSON.parse(
            execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, "--child", engine, csv], {
              cwd: ROOT,
              encoding: "utf8",
            })
              .trim()
              .split("\n")
              .pop()!,
          ) as { importMs: number; loadMs: number; queryMs: number; rows: number },
      );
      const bytes = ON_DISK[engine].reduce((sum, p) => sum + dirBytes(join(ROOT, p)), 0);
      rows.push({
        engine,
        "import + init ms": median(runs.map((r) => r.importMs)).toFixed(0),
        "load 100k×10 CSV ms": median(runs.map((r) => r.loadMs)).toFixed(0),
        "group-by ms": median(runs.map((r) => r.queryMs)).toFixed(1),
        "cold total ms": median(runs.map((r) => r.importMs + r.loadMs + r.queryMs)).toFixed(0),
        "on disk MB": (bytes / 1e6).toFixed(1),
      });
    }
    await invocations(dir, csv);
    printTable(
      `SQL engines on a ${ROWS.toLocaleString("en")}-row, 10-column CSV (${(statSync(csv).size / 1e6).toFixed(1)} MB), median of ${RUNS} cold processes`,
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A query_data call as the chat function makes it (the files loaded, the group-by run, the rows
 * read) through the invocation, against the engine in this process: the local child-process pool (the
 * data function's stand-in: a message to a thread and back) and this process directly. Then the
 * memory the data function needs for it, measured: the peak RSS of a fresh process answering it.
 */
async function invocations(dir: string, csv: string) {
  const key = "users/bench/sessions/00000000-0000-4000-8000-000000000001/00000000-0000-4000-8000-000000000002";
  const bytes = new Uint8Array(readFileSync(csv));
  const request = {
    tables: [{ name: "t", key, format: "csv" as const }],
    sql: GROUP_BY,
    limits: { ...DEFAULT_SQL_LIMITS, timeoutMs: 30_000 },
  };
  const { mkdirSync, writeFileSync: write } = await import("node:fs");
  mkdirSync(join(dir, key, ".."), { recursive: true });
  write(join(dir, key), bytes);
  const pool = workerDataEngine({ dir, threads: 1 });
  const engines: [string, DataEngine][] = [
    ["in process", inProcessEngine(async () => bytes)],
    ["child processes (local data function)", pool],
  ];
  const rows: Record<string, string>[] = [];
  try {
    for (const [name, engine] of engines) {
      await engine.query(request); // warm: the engine loaded, the thread started
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await engine.query(request);
        times.push(performance.now() - t0);
      }
      rows.push({
        path: name,
        "query_data ms (median)": median(times).toFixed(1),
        "min ms": Math.min(...times).toFixed(1),
      });
    }
  } finally {
    await pool.close();
  }
  printTable(
    `query_data over the ${ROWS.toLocaleString("en")}-row CSV: through the invocation vs in process, warm, ${RUNS} runs`,
    rows,
  );
  const rss = JSON.parse(
    execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, "--rss", csv], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop()!,
  ) as { beforeMb: number; peakMb: number };
  printTable("the data function's memory, measured (a fresh process answering that query_data)", [
    {
      "RSS at start MB": rss.beforeMb.toFixed(0),
      "peak RSS MB": rss.peakMb.toFixed(0),
      "SQL_MEMORY_MB (DuckDB's cap)": String(DEFAULT_SQL_LIMITS.memoryLimitMb),
    },
  ]);
}

/** The child for --rss: one query_data in a fresh process, its peak resident memory. */
async function rssChild(csv: string) {
  const beforeMb = process.memoryUsage().rss / 2 ** 20;
  const bytes = new Uint8Array(readFileSync(csv));
  await inProcessEngine(async () => bytes).query({
    tables: [{ name: "t", key: "k", format: "csv" }],
    sql: GROUP_BY,
    limits: { ...DEFAULT_SQL_LIMITS, timeoutMs: 30_000 },
  });
  console.log(JSON.stringify({ beforeMb, peakMb: process.resourceUsage().maxRSS / 1024 }));
}

const rssAt = process.argv.indexOf("--rss");
if (rssAt >= 0) await rssChild(process.argv[rssAt + 1]!);
const at = process.argv.indexOf("--child");
if (at >= 0) await child(process.argv[at + 1] as Engine, process.argv[at + 2]!);
