import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSEvent } from "aws-lambda";
import { createSupportWorker } from "../../functions/support-worker";
import type { SupportRuntime } from "../../graph/support/runtime";
import { idempotency } from "../../shared/idempotency";
import { context, sqsRecord as record } from "../support/events";

describe("the support worker's messages", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("fails each malformed or ill-formed message on its own (so SQS dead-letters it), before any run", async () => {
    // A message can reach the queue without the webhook's checks: the worker checks it again.
    // Powertools' idempotency off (its documented switch), so a message that got through would reach
    // answer rather than fail on the unreachable table.
    vi.stubEnv("POWERTOOLS_IDEMPOTENCY_DISABLED", "true");
    const answer = vi.fn();
    const unreachable = new DynamoDBClient({ endpoint: "http://127.0.0.1:9", region: "local" });
    const worker = createSupportWorker(
      async () =>
        ({
          idempotency: idempotency(unreachable, "markers", "[conversation_id, part_id]"),
          support: { answer },
        }) as unknown as SupportRuntime,
    );
    const message = { notification_id: "n1", conversation_id: "c1", part_id: "p1", topic: "conversation.user.replied" };
    const bad = [
      record("not-json", "{"),
      record("no-part", JSON.stringify({ ...message, part_id: undefined })),
      record("lone-surrogate", JSON.stringify({ ...message, conversation_id: "c\ud800" })),
      record("nul", JSON.stringify({ ...message, part_id: "p\u0000" })),
      record("too-long", JSON.stringify({ ...message, conversation_id: "c".repeat(129) })),
    ];
    const response = await worker({ Records: bad } as SQSEvent, context());
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(bad.map((r) => r.messageId).sort());
    expect(answer).not.toHaveBeenCalled();
    // The control: a well-formed message is answered.
    const good = await worker({ Records: [record("good", JSON.stringify(message))] } as SQSEvent, context());
    expect(good.batchItemFailures).toEqual([]);
    expect(answer).toHaveBeenCalledTimes(1);
  });
});
