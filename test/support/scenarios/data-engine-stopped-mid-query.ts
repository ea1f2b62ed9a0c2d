// Run in a process of its own by test/infra/local/data-worker.integration.test.ts: if stopping a
// query mid-flight brings the process down, it must not be the test runner's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workerDataEngine } from "../../../infra/local/data-worker";
import { DEFAULT_SQL_LIMITS } from "../../../shared/files/sql-errors";

const RUNAWAY = "SELECT sum(a.range * b.range) FROM range(400000) a, range(400000) b";
const dir = mkdtempSync(join(tmpdir(), "data-worker-"));
const engine = workerDataEngine({ dir, threads: 1 });
// The engine is closed while the query runs (as the local stack closes under a running query):
// what the query runs in is ended mid-statement. A second engine then answers as before.
const limits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 20_000 };
const running = engine.query({ tables: [], sql: RUNAWAY, limits }).then(
  () => "finished",
  (err: Error) => err.message,
);
await new Promise((r) => setTimeout(r, 1_500));
await engine.close();
const stopped = await running;
const next = workerDataEngine({ dir, threads: 1 });
const after = await next.query({ tables: [], sql: "SELECT 42 AS n", limits: DEFAULT_SQL_LIMITS });
await next.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ stopped, after }));
