import type { SQSEvent } from "aws-lambda";
import { MAX_RECEIVES, recordDeadLetters } from "../../shared/sqs-batch";
import type { Logger } from "../../shared/logger";
import type { Metrics } from "../../shared/metrics";

const record = (messageId: string, receives: number) => ({
  messageId,
  receiptHandle: "h",
  body: "{}",
  attributes: {
    ApproximateReceiveCount: String(receives),
    SentTimestamp: "0",
    SenderId: "s",
    ApproximateFirstReceiveTimestamp: "0",
  },
  messageAttributes: {},
  md5OfBody: "",
  eventSource: "aws:sqs",
  eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:q",
  awsRegion: "us-east-1",
});

describe("SQS batches: dead-letter accounting", () => {
  it("counts and logs only failed records on their last receive, returning the response unchanged", () => {
    const added: unknown[][] = [];
    const errors: unknown[][] = [];
    const metrics = { addMetric: (...a: unknown[]) => added.push(a) } as unknown as Metrics;
    const logger = { error: (...a: unknown[]) => errors.push(a) } as unknown as Logger;
    const event = {
      Records: [record("ok", MAX_RECEIVES), record("retry", 1), record("last", MAX_RECEIVES), record("late", 5)],
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
    const event = { Records: [record("a", 1)] } as SQSEvent;
    recordDeadLetters(event, { batchItemFailures: [{ itemIdentifier: "a" }] }, { metrics, logger: {} as Logger });
    expect(added).toEqual([]);
  });
});
