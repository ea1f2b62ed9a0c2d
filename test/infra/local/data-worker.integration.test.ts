import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

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
