import type { Context, SQSEvent } from "aws-lambda";
import { sqsRecord } from "../support/events";
import { MAX_RECEIVES, recordDeadLetters, sqsBatchHandler } from "../../shared/sqs-batch";
import type { Logger } from "../../shared/logger";
import type { Metrics } from "../../shared/metrics";

describe("SQS batches: dead-letter accounting", () => {
  it("counts and logs only failed records on their last receive, returning the response unchanged", () => {
    const added: unknown[][] = [];
    const errors: unknown[][] = [];
    const metrics = { addMetric: (...a: unknown[]) => added.push(a) } as unknown as Metrics;
    const logger = { error: (...a: unknown[]) => errors.push(a) } as unknown as Logger;
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
    expect(recordDeadLetters(event, response, { metrics, logger })).toBe(response);
    expect(added).toEqual([["DeadLettered", "Count", 2]]);
    expect(errors[0]![1]).toEqual({ messageIds: ["last", "late"] });
  });

  it("records nothing when no failure is on its last receive", () => {
    const added: unknown[] = [];
    const metrics = { addMetric: (...a: unknown[]) => added.push(a) } as unknown as Metrics;
    const event = { Records: [sqsRecord("a", "{}", 1)] } as SQSEvent;
    recordDeadLetters(event, { batchItemFailures: [{ itemIdentifier: "a" }] }, { metrics, logger: {} as Logger });
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
