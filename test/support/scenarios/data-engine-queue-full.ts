// Run in a process of its own by test/infra/local/data-worker.integration.test.ts: a request
// refused because the queue is full must not bring the process down when its time limit passes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workerDataEngine } from "../../../infra/local/data-worker";
import { DEFAULT_SQL_LIMITS } from "../../../shared/files/sql-errors";

const RUNAWAY = "SELECT sum(a.range * b.range) FROM range(400000) a, range(400000) b";
const dir = mkdtempSync(join(tmpdir(), "data-worker-"));
// One process and a queue of one: the first request runs, the second waits, the third is refused.
const engine = workerDataEngine({ dir, threads: 1, maxQueue: 1 });
const limits = { ...DEFAULT_SQL_LIMITS, timeoutMs: 500 };
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "answered",
    (err: Error) => err.constructor.name,
  );
const requests = [0, 1, 2].map(() => outcome(engine.query({ tables: [], sql: RUNAWAY, limits })));
const outcomes = await Promise.all(requests);
// Past the refused request's own time limit (3 × 500 + 1,000 ms): the process is still here.
await new Promise((r) => setTimeout(r, 3_000));
const after = await engine.query({ tables: [], sql: "SELECT 42 AS n", limits: DEFAULT_SQL_LIMITS });
await engine.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ outcomes, after }));
