import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

/** Hands a message to a queue: SQS in AWS, the local stack's in-process queue locally. */
export interface QueuePublisher {
  /** `delaySeconds`: hidden from consumers this long first (SQS's DelaySeconds, at most 900) */
  publish(body: unknown, options?: { delaySeconds?: number }): Promise<void>;
}

export class SqsPublisher implements QueuePublisher {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(body: unknown, options: { delaySeconds?: number } = {}): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(body),
        ...(options.delaySeconds ? { DelaySeconds: Math.min(900, Math.max(0, Math.round(options.delaySeconds))) } : {}),
      }),
    );
  }
}
