import type { SQSEvent } from "aws-lambda";
import { createRunWorker } from "../../functions/run-worker";
import type { AgentServer } from "../../graph/agent-server/runtime";
import { context, sqsRecord as record } from "../support/events";

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
    ];
    const response = await worker({ Records: bad } as SQSEvent, context());
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(bad.map((r) => r.messageId).sort());
  });
});
