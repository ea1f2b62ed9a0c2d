import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { human, sdkClient } from "../support/sdk";

// A probe's finding: the local stack keeps its queues and cron timers in the process, so a restart
// on the same data folder lost them: a background run waiting its turn stayed pending for good
// (its thread refusing runs and state writes), and every cron stopped firing though it still
// listed as enabled. In AWS, SQS and EventBridge Scheduler keep them.
describe("a restarted local stack", () => {
  it("takes up the pending runs and cron schedules its data folder holds", async () => {
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "restart-work-")), PORT: "0", LOG_LEVEL: "SILENT" };
    let stack: LocalStack = await startLocalStack(env);
    try {
      const client = sdkClient(stack, "restarter");
      const thread = await client.threads.create();
      // Due in 2 s: still pending when the stack stops.
      const run = await client.runs.create(thread.thread_id, "chat", { input: human("hello"), afterSeconds: 2 });
      const cron = await client.crons.createForThread(thread.thread_id, "chat", {
        schedule: "0 9 * * 1",
        input: human("weekly"),
      });
      await stack.close();
      stack = await startLocalStack(env);
      expect(stack.crons.schedules().map((s) => s.cron_id)).toContain(cron.cron_id);
      const after = sdkClient(stack, "restarter");
      await expect
        .poll(async () => (await after.runs.get(thread.thread_id, run.run_id)).status, {
          interval: 200,
          timeout: 15_000,
        })
        .toBe("success");
    } finally {
      await stack.close();
    }
  }, 60_000);
});
