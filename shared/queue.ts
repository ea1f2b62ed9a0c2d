import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

/** Hands a message to a queue: SQS in AWS, the local stack's in-process queue locally. */
export interface QueuePublisher {
  publish(body: unknown): Promise<void>;
}

export class SqsPublisher implements QueuePublisher {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(body: unknown): Promise<void> {
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(body) }));
  }
}
