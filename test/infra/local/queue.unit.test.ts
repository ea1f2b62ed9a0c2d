import type { SQSEvent } from "aws-lambda";
import type { IncomingMessage } from "node:http";
import { LocalQueue } from "../../../infra/local/queue";
import { requestOrigin, withRequestOrigin } from "../../../infra/local/request-origin";

const fast = { visibilityTimeoutMs: 30, pollIntervalMs: 5 };

describe("local queue keeps SQS's contract", () => {
  it("delivers SQS event records in batches and deletes what succeeded", async () => {
    const queue = new LocalQueue({ name: "q", batchSize: 3, ...fast });
    const batches: SQSEvent[] = [];
    for (let i = 0; i < 7; i++) queue.send(JSON.stringify({ i }));
    queue.start(async (event) => {
      batches.push(event);
    });
    await queue.drained();
    await queue.stop();
    expect(batches.map((b) => b.Records.length)).toEqual([3, 3, 1]);
    const record = batches[0]!.Records[0]!;
    expect(record).toMatchObject({
      eventSource: "aws:sqs",
      body: '{"i":0}',
      attributes: { ApproximateReceiveCount: "1" },
      md5OfBody: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(record.receiptHandle).toBeTruthy();
  });

  it("redelivers only the batch item failures, with a growing receive count", async () => {
    const queue = new LocalQueue({ name: "q", ...fast });
    const seen: string[] = [];
    queue.send("ok");
    queue.send("flaky");
    queue.start(async (event) => {
      const failures = [];
      for (const r of event.Records) {
        seen.push(`${r.body}#${r.attributes.ApproximateReceiveCount}`);
        if (r.body === "flaky" && r.attributes.ApproximateReceiveCount === "1")
          failures.push({ itemIdentifier: r.messageId });
      }
      return { batchItemFailures: failures };
    });
    await queue.drained();
    await queue.stop();
    expect(seen).toEqual(["ok#1", "flaky#1", "flaky#2"]);
  });

  it("redelivers a whole batch when the handler throws", async () => {
    const queue = new LocalQueue({ name: "q", ...fast });
    let calls = 0;
    queue.send("a");
    queue.send("b");
    queue.start(async (event) => {
      calls++;
      if (calls === 1) throw new Error("crash");
      expect(event.Records.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(["2", "2"]);
    });
    await queue.drained();
    await queue.stop();
    expect(calls).toBe(2);
  });

  it("keeps a received message invisible for the visibility timeout", async () => {
    const queue = new LocalQueue({ name: "q", visibilityTimeoutMs: 200, pollIntervalMs: 5 });
    const times: number[] = [];
    queue.send("slow");
    const started = Date.now();
    queue.start(async (event) => {
      times.push(Date.now() - started);
      return { batchItemFailures: times.length === 1 ? [{ itemIdentifier: event.Records[0]!.messageId }] : [] };
    });
    await queue.drained();
    await queue.stop();
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(190);
  });

  it("moves a poison message to the dead-letter queue after maxReceiveCount, while the rest succeed", async () => {
    const dlq = new LocalQueue({ name: "dlq" });
    const queue = new LocalQueue({ name: "q", maxReceiveCount: 3, deadLetterQueue: dlq, ...fast });
    const done: string[] = [];
    let poisonReceives = 0;
    for (const body of ["good-1", "poison", "good-2"]) queue.send(body);
    queue.start(async (event) => ({
      batchItemFailures: event.Records.filter((r) => {
        if (r.body === "poison") {
          poisonReceives++;
          return true;
        }
        done.push(r.body);
        return false;
      }).map((r) => ({ itemIdentifier: r.messageId })),
    }));
    await queue.drained();
    await queue.stop();
    expect(done).toEqual(["good-1", "good-2"]);
    expect(poisonReceives).toBe(3);
    expect(dlq.peek().map((m) => m.body)).toEqual(["poison"]);
  });
});

describe("local queue's consumer", () => {
  it("runs in the queue's own context, not in that of the request that sent the message", async () => {
    // As in Lambda, where the consumer is another invocation: nothing of the sender's request
    // (here the origin it came in on, infra/local/request-origin.ts) reaches the worker.
    const queue = new LocalQueue({ name: "q", ...fast });
    const origins: string[] = [];
    queue.start(async () => {
      origins.push(requestOrigin("http://configured:3000"));
    });
    const req = { headers: { host: "127.0.0.1:4567" } } as IncomingMessage;
    withRequestOrigin(req, () => {
      expect(requestOrigin("http://configured:3000")).toBe("http://127.0.0.1:4567");
      queue.send("from a request");
    });
    await queue.drained();
    await queue.stop();
    expect(origins).toEqual(["http://configured:3000"]);
  });
});
