import type { SQSEvent } from "aws-lambda";
import { createRunWorker } from "../../functions/run-worker";
import { fireCron } from "../../graph/agent-server/crons";
import type { AgentServer } from "../../graph/agent-server/runtime";
import { context, sqsRecord as record } from "../support/events";

vi.mock("../../graph/agent-server/crons", async (actual) => ({
  ...(await actual<typeof import("../../graph/agent-server/crons")>()),
  fireCron: vi.fn(async () => {}),
}));

describe("the run worker's messages", () => {
  it("fails each malformed message on its own (so SQS dead-letters it), touching no store", async () => {
    // A server with no stores: any read would throw something other than the parse failure.
    const worker = createRunWorker(async () => ({}) as AgentServer);
    const bad = [
      record("not-json", "{"),
      record("array", "[]"),
      record("no-run", JSON.stringify({ thread_id: "6f9619ff-8b86-4011-b42d-00cf4fc964ff" })),
      record("foreign-ids", JSON.stringify({ thread_id: "../x", run_id: "6f9619ff-8b86-4011-b42d-00cf4fc964ff" })),
      record("nul", '{"thread_id":"\\u0000","run_id":"x"}'),
      record(
        "bad-time",
        JSON.stringify({ cron_id: "6f9619ff-8b86-4011-b42d-00cf4fc964ff", user_id: "u", scheduled_time: "yesterday" }),
      ),
    ];
    const response = await worker({ Records: bad } as SQSEvent, context());
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(bad.map((r) => r.messageId).sort());
  });

  it("tells a cron's firing delivered again that it was (so a run its lost worker left running is marked lost, not stuck)", async () => {
    const worker = createRunWorker(async () => ({}) as AgentServer);
    const firing = { cron_id: "6f9619ff-8b86-4011-b42d-00cf4fc964ff", user_id: "u" };
    await worker({ Records: [record("first", firing, 1), record("again", firing, 2)] } as SQSEvent, context());
    const calls = vi.mocked(fireCron).mock.calls.map(([, , options]) => [options.deliveryId, options.redelivered]);
    expect(calls).toEqual([
      ["first", false],
      ["again", true],
    ]);
  });
});
