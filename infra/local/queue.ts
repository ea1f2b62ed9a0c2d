import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { createHash, randomUUID } from "node:crypto";
import type { QueuePublisher } from "../../shared/queue";
import { lambdaContext } from "./api-gateway";
import { MAX_RECEIVES } from "../../shared/sqs-batch";

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface LocalQueueOptions {
  name: string;
  /** how long a received message stays hidden before it is delivered again */
  visibilityTimeoutMs?: number;
  /** receives after which a message moves to the dead-letter queue */
  maxReceiveCount?: number;
  batchSize?: number;
  /** how often an idle queue looks for visible messages */
  pollIntervalMs?: number;
  deadLetterQueue?: LocalQueue;
  /** the consumer's timeout, which its context's remaining time starts from */
  functionTimeoutMs?: number;
  /** where a handler that throws is reported (the Lambda runtime logs it); console.error unless given */
  onError?: (message: string, error: unknown) => void;
}

interface Stored {
  messageId: string;
  body: string;
  sentAt: number;
  firstReceivedAt?: number;
  receiveCount: number;
  visibleAt: number;
  receiptHandle?: string;
}

/**
 * An in-process queue with SQS's contract, so the consumer that runs in Lambda runs
 * here unchanged: SQS event records, batches, at-least-once delivery (a failed or
 * unacknowledged message comes back after the visibility timeout), a dead-letter queue
 * after maxReceiveCount receives, and partial batch failures via batchItemFailures.
 *
 * Hand-written: no maintained npm package emulates SQS in process with redrive and
 * batch item failures (sqs-mock has no redrive; ElasticMQ needs a JVM or Docker).
 */
export class LocalQueue implements QueuePublisher {
  readonly name: string;
  private readonly messages = new Map<string, Stored>();
  readonly visibilityTimeoutMs: number;
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly deadLetterQueue?: LocalQueue;
  private readonly onError: (message: string, error: unknown) => void;
  readonly functionTimeoutMs?: number;
  private handler?: SqsHandler;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;

  constructor(options: LocalQueueOptions) {
    this.name = options.name;
    this.visibilityTimeoutMs = options.visibilityTimeoutMs ?? 30_000;
    this.maxReceiveCount = options.maxReceiveCount ?? MAX_RECEIVES;
    this.batchSize = options.batchSize ?? 10;
    this.pollIntervalMs = options.pollIntervalMs ?? 50;
    this.deadLetterQueue = options.deadLetterQueue;
    this.onError = options.onError ?? ((message, error) => console.error(message, error));
    this.functionTimeoutMs = options.functionTimeoutMs;
  }

  /**
   * The async context the queue was made in. The consumer runs in it, not in the context of
   * whichever request's send kicked the poll: in Lambda the consumer is another invocation, and
   * nothing of the sender's request (e.g. the origin it came in on) may reach it.
   */
  private readonly ownContext = AsyncLocalStorage.snapshot();

  async publish(body: unknown, options: { delaySeconds?: number } = {}): Promise<void> {
    this.send(typeof body === "string" ? body : JSON.stringify(body), options.delaySeconds);
  }

  /** SendMessage: returns the message id. `delaySeconds` hides it that long first (capped at 900, as SQS caps it). */
  send(body: string, delaySeconds = 0): string {
    const messageId = randomUUID();
    const visibleAt = Date.now() + Math.min(900, Math.max(0, delaySeconds)) * 1000;
    this.messages.set(messageId, { messageId, body, sentAt: Date.now(), receiveCount: 0, visibleAt });
    this.kick();
    return messageId;
  }

  /** Messages not yet deleted, visible or in flight (ApproximateNumberOfMessages + NotVisible). */
  get depth(): number {
    return this.messages.size;
  }

  /** What sits in the queue: for inspecting a dead-letter queue. */
  peek(): { messageId: string; body: string; receiveCount: number }[] {
    return [...this.messages.values()].map(({ messageId, body, receiveCount }) => ({ messageId, body, receiveCount }));
  }

  /** The event source mapping: deliver batches to `handler` until stopped. */
  start(handler: SqsHandler): void {
    this.handler = handler;
    this.stopped = false;
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Resolves once no message is left (processed or dead-lettered). */
  async drained(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.size > 0) {
      if (Date.now() > deadline) throw new Error(`queue ${this.name} still holds ${this.messages.size} message(s)`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await this.running;
  }

  private kick(delayMs = 0): void {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () =>
        this.ownContext(() => {
          this.running = this.poll().finally(() => {
            this.running = undefined;
            const next = this.nextVisibleIn();
            if (next !== undefined) this.kick(Math.max(next, 0));
          });
        }),
      delayMs,
    );
  }

  private nextVisibleIn(): number | undefined {
    if (this.messages.size === 0) return undefined;
    const soonest = Math.min(...[...this.messages.values()].map((m) => m.visibleAt));
    return Math.max(soonest - Date.now(), this.pollIntervalMs);
  }

  /** ReceiveMessage for one batch, invoke, then delete what succeeded. */
  private async poll(): Promise<void> {
    const now = Date.now();
    const batch: Stored[] = [];
    for (const m of this.messages.values()) {
      if (batch.length >= this.batchSize) break;
      if (m.visibleAt > now) continue;
      // SQS moves a message once it has been received maxReceiveCount times and comes back again.
      if (m.receiveCount >= this.maxReceiveCount && this.deadLetterQueue) {
        this.messages.delete(m.messageId);
        this.deadLetterQueue.send(m.body);
        continue;
      }
      m.receiveCount += 1;
      m.firstReceivedAt ??= now;
      m.visibleAt = now + this.visibilityTimeoutMs;
      m.receiptHandle = randomUUID();
      batch.push(m);
    }
    if (batch.length === 0 || !this.handler) return;

    const records = batch.map((m) => this.record(m));
    let failed: Set<string>;
    try {
      const response = await this.handler({ Records: records }, lambdaContext(this.name, this.functionTimeoutMs));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      // A thrown handler fails the whole batch: every message comes back after its timeout.
      this.onError(`queue ${this.name}: the handler threw; ${batch.length} message(s) will be redelivered`, err);
      failed = new Set(batch.map((m) => m.messageId));
    }
    for (const m of batch) {
      if (!failed.has(m.messageId) && this.messages.get(m.messageId)?.receiptHandle === m.receiptHandle) {
        this.messages.delete(m.messageId);
      }
    }
  }

  private record(m: Stored): SQSRecord {
    return {
      messageId: m.messageId,
      receiptHandle: m.receiptHandle!,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: "local",
        ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt),
      },
      messageAttributes: {},
      md5OfBody: createHash("md5").update(m.body).digest("hex"),
      eventSource: "aws:sqs",
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.name}`,
      awsRegion: "local",
    };
  }
}

/** A queue and its dead-letter queue, redriven after 3 receives as the CDK stack sets them up. */
export function queueWithDeadLetters(name: string, options: Omit<LocalQueueOptions, "name" | "deadLetterQueue">) {
  const deadLetters = new LocalQueue({ name: `${name}-dlq` });
  const queue = new LocalQueue({ ...options, name, deadLetterQueue: deadLetters });
  return { queue, deadLetters };
}
