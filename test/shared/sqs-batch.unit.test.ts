import type { Context, SQSEvent } from "aws-lambda";
import { sqsRecord } from "../support/events";
import { MAX_RECEIVES, recordDeadLetters, sqsBatchHandler } from "../../shared/sqs-batch";
import type { Logger } from "../../shared/logger";
import type { Metrics } from "../../shared/metrics";

describe("SQS batches: dead-letter accounting", () => {
  it("counts only failed records on their last receive, returning the response unchanged", () => {
    const added: unknown[][] = [];
    const metrics = { addMetric: (...a: unknown[]) => added.push(a) } as unknown as Metrics;
    const event = {
      Records: [
        sqsRecord("ok", "{}", MAX_RECEIVES),
        sqsRecord("retry", "{}", 1),
        sqsRecord("last", "{}", MAX_RECEIVES),
        sqsRecord("late", "{}", 5),
      ],
    } as SQSEvent;
    const response = {
      batchItemFailures: [{ itemIdentifier: "retry" }, { itemIdentifier: "last" }, { itemIdentifier: "late" }],
    };
    expect(recordDeadLetters(event, response, { metrics })).toBe(response);
    expect(added).toEqual([["DeadLettered", "Count", 2]]);
  });

  it("records nothing when no failure is on its last receive", () => {
    const added: unknown[] = [];
    const metrics = { addMetric: (...a: unknown[]) => added.push(a) } as unknown as Metrics;
    const event = { Records: [sqsRecord("a", "{}", 1)] } as SQSEvent;
    recordDeadLetters(event, { batchItemFailures: [{ itemIdentifier: "a" }] }, { metrics });
    expect(added).toEqual([]);
  });
});

describe("SQS batches: the runner end to end", () => {
  const fakeMetrics = () => {
    const added: unknown[][] = [];
    let published = 0;
    const metrics = {
      addMetric: (...a: unknown[]) => added.push(a),
      publishStoredMetrics: () => published++,
    } as unknown as Metrics;
    return { metrics, added, published: () => published };
  };
  const quietLogger = { error: () => {}, warn: () => {}, info: () => {} } as unknown as Logger;
  const context = { getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

  it("counts a one-record batch failing on its last receive as dead-lettered, and reports it instead of throwing", async () => {
    const { metrics, added, published } = fakeMetrics();
    const run = sqsBatchHandler({ metrics, logger: quietLogger });
    const event = { Records: [sqsRecord("only", "{}", MAX_RECEIVES)] } as SQSEvent;
    const response = await run(event, context, async () => {
      throw new Error("cannot be processed");
    });
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "only" }] });
    expect(added).toEqual([["DeadLettered", "Count", 1]]);
    expect(published()).toBe(1);
  });

  it("logs every failed record with its reason: a warning while SQS will deliver it again, an error on its last receive", async () => {
    const { metrics } = fakeMetrics();
    const lines: { level: string; message: string; extra: Record<string, unknown> }[] = [];
    const log = (level: string) => (message: string, extra: Record<string, unknown>) =>
      lines.push({ level, message, extra });
    const logger = { error: log("error"), warn: log("warn"), info: () => {} } as unknown as Logger;
    const run = sqsBatchHandler({ metrics, logger });
    const throttled = Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
    await run(
      {
        Records: [sqsRecord("ok", "{}", 1), sqsRecord("again", "{}", 1), sqsRecord("last", "{}", MAX_RECEIVES)],
      } as SQSEvent,
      context,
      async (r) => {
        if (r.messageId === "again") throw throttled;
        if (r.messageId === "last") throw new Error("PGRST002: schema cache not loaded");
      },
    );
    expect(lines).toEqual([
      {
        level: "warn",
        message: expect.stringMatching(/SQS delivers it again/),
        extra: { messageId: "again", receiveCount: 1, reason: "ThrottlingException: Rate exceeded" },
      },
      {
        level: "error",
        message: expect.stringMatching(/dead-letter queue/),
        extra: { messageId: "last", receiveCount: MAX_RECEIVES, reason: "Error: PGRST002: schema cache not loaded" },
      },
    ]);
  });

  it("runs records one at a time when asked to (sequential), in order", async () => {
    const { metrics } = fakeMetrics();
    const run = sqsBatchHandler({ metrics, logger: quietLogger, processing: "sequential" });
    let running = 0;
    let most = 0;
    const seen: string[] = [];
    await run(
      { Records: [sqsRecord("a", "{}", 1), sqsRecord("b", "{}", 1), sqsRecord("c", "{}", 1)] } as SQSEvent,
      context,
      async (r) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(r.messageId);
        running--;
      },
    );
    expect(most).toBe(1);
    expect(seen).toEqual(["a", "b", "c"]);
  });

  it("runs records side by side when parallel", async () => {
    const { metrics } = fakeMetrics();
    const run = sqsBatchHandler({ metrics, logger: quietLogger, processing: "parallel" });
    let running = 0;
    let most = 0;
    await run(
      { Records: [sqsRecord("a", "{}", 1), sqsRecord("b", "{}", 1), sqsRecord("c", "{}", 1)] } as SQSEvent,
      context,
      async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      },
    );
    expect(most).toBe(3);
  });
});
