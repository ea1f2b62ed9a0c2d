import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { workerDataEngine } from "../../../infra/local/data-worker";
import { SCRATCH_ROOT } from "../../../shared/files/scratch";
import { DEFAULT_SQL_LIMITS, SqlBusy, SqlError } from "../../../shared/files/sql-errors";

const SCENARIO = fileURLToPath(new URL("../../support/scenarios/data-engine-stopped-mid-query.ts", import.meta.url));

// Ending a worker thread while DuckDB ran in it aborted the whole process (SIGABRT, "terminate
// called after throwing an instance of 'Napi::Error'"): the local stack, or the test worker that
// held it. The scenario runs in a process of its own so that a crash fails this test, not the run.
it("stops a query mid-statement without taking its host process down, and answers the next", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", SCENARIO], {
    timeout: 60_000,
  });
  const { stopped, after } = JSON.parse(stdout);
  expect(stopped).not.toBe("finished");
  expect(after.rows).toEqual([{ n: 42 }]);
}, 90_000);

// tinypool attaches a request's abort listener before it refuses the request for a full queue, and
// never removes it: when the request's time limit passed, the listener threw inside a timer and the
// whole local stack exited (11 queries at once from one user did it).
it("refuses a request past the queue as busy, and lives on past that request's time limit", async () => {
  const scenario = fileURLToPath(new URL("../../support/scenarios/data-engine-queue-full.ts", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", scenario], { timeout: 60_000 });
  const { outcomes, after } = JSON.parse(stdout);
  expect(outcomes).toContain("SqlBusy");
  expect(after.rows).toEqual([{ n: 42 }]);
}, 90_000);

// A query stopped by killing its process (the hard limit here, a timeout or running out of memory
// in Lambda, where /tmp outlives the process) never reached its `finally`: the copies of the
// user's files stayed in the temporary folder for good, past the file's and the session's deletion.
it("removes the file copies a killed engine process left behind on its successor's first request", async () => {
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid!; // a process that has ended
  const leftover = join(SCRATCH_ROOT, String(gone), "data-files-x");
  mkdirSync(leftover, { recursive: true });
  writeFileSync(join(leftover, "0"), "a copy of someone's file");
  const engine = workerDataEngine({ dir: tmpdir(), threads: 1 });
  try {
    await engine.query({ tables: [], sql: "SELECT 1 AS n", limits: DEFAULT_SQL_LIMITS });
    expect(existsSync(leftover)).toBe(false);
    // And on every later request: a process that keeps serving sees others killed beside it.
    const later = join(SCRATCH_ROOT, String(gone), "data-files-y");
    mkdirSync(later, { recursive: true });
    await engine.query({ tables: [], sql: "SELECT 1 AS n", limits: DEFAULT_SQL_LIMITS });
    expect(existsSync(later)).toBe(false);
  } finally {
    await engine.close();
  }
}, 60_000);

// The hard limit counted the time a request waited for a process: a valid upload checked while
// other users' runaway queries held every process was stopped, and the stop read as the file's
// fault (rejected for good, its bytes deleted). Waiting past the time limit is busy, to retry.
it("answers a request that waited past its time limit for a process as busy, not as stopped", async () => {
  const engine = workerDataEngine({ dir: tmpdir(), threads: 1 });
  const limits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 500 };
  try {
    // One function call DuckDB's interrupt cannot stop: the process holds it to the hard limit.
    const runaway = engine
      .query({ tables: [], sql: "SELECT levenshtein(repeat('a', 40000), repeat('b', 40000)) AS d", limits })
      .catch((err: Error) => err);
    const waited = await engine.query({ tables: [], sql: "SELECT 1 AS n", limits }).catch((err: Error) => err);
    expect(waited).toBeInstanceOf(SqlBusy);
    await runaway;
  } finally {
    await engine.close();
  }
}, 60_000);

// DuckDB keeps some values outside its memory limit (SQL_MEMORY_MB): a probe's 4 KB Parquet file,
// one 100 MB string referenced by every row, drove a local engine process to 6 GB, where the data
// function in AWS would have ended at its 1,024 MB. The local process now ends where Lambda's would.
it("ends a process that goes over the data function's memory, and answers the next request", async () => {
  const engine = workerDataEngine({ dir: tmpdir(), threads: 1, memoryMb: 400 });
  const limits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 30_000 };
  try {
    const err = await engine
      .query({ tables: [], sql: "SELECT length(repeat('ab', 400000000)) AS n", limits })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(SqlError);
    expect((err as Error).message).toMatch(/went over its 400 MB of memory/);
    expect(await engine.query({ tables: [], sql: "SELECT 42 AS n", limits })).toMatchObject({ rows: [{ n: 42 }] });
  } finally {
    await engine.close();
  }
}, 60_000);

// The probe's file itself: its rows are converted to JavaScript on the process's main thread, which
// a watch on that thread could not see past (it took 6 GB before the watch ran).
it("ends it too while a Parquet file's one large string, referenced by every row, is read", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bomb-"));
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const db = await DuckDBInstance.create(":memory:");
  const connection = await db.connect();
  await connection.run(
    `COPY (SELECT repeat('a', 100000000) AS s FROM range(20)) TO '${join(dir, "bomb.parquet")}' (FORMAT parquet, COMPRESSION zstd)`,
  );
  connection.closeSync();
  db.closeSync();
  const engine = workerDataEngine({ dir, threads: 1, memoryMb: 400 });
  const peak = watchChildrenMemory();
  try {
    const err = await engine
      .inspect({
        key: "bomb.parquet",
        name: "bomb.parquet",
        media_type: "application/vnd.apache.parquet",
        maxRows: 100_000,
        limits: { ...DEFAULT_SQL_LIMITS, timeoutMs: 30_000 },
      })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(SqlError);
    expect((err as Error).message).toMatch(/went over its 400 MB of memory/);
    // Ended near its limit: the reading of every row would take 2 GB.
    expect(peak.stop()).toBeLessThan(1_000);
  } finally {
    peak.stop();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

/** The largest resident size (MB) of this process's children until stop(), read from /proc every 10 ms. */
function watchChildrenMemory() {
  let peak = 0;
  const timer = setInterval(() => {
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
        peak = Math.max(peak, Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
      } catch {
        // ended meanwhile
      }
    }
  }, 10);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}
