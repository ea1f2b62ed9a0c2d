import { Duration } from "aws-cdk-lib";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { queueSettings, type QueueName } from "../manifest";
import type { Monitoring } from "./monitoring";

/**
 * A consumer's queue and its dead-letter queue, as the manifest sets them: a visibility timeout of
 * 6x the consumer's timeout (AWS's advice for Lambda, so a slow batch is not handed to a second
 * invocation while the first still runs), MAX_RECEIVES receives before the dead-letter queue, an
 * alarm on anything landing there and on a message older than a full retry cycle.
 */
export function queueWithDeadLetters(scope: Construct, id: string, name: QueueName, monitoring: Monitoring) {
  const settings = queueSettings(name);
  const deadLetters = new Queue(scope, `${id}DLQ`, {
    retentionPeriod: Duration.days(14),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  const queue = new Queue(scope, `${id}Queue`, {
    visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
    retentionPeriod: Duration.days(4),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: settings.maxReceives },
  });
  monitoring.queue(queue, deadLetters, id, Duration.seconds(settings.visibilityTimeoutSeconds * settings.maxReceives));
  return { queue, deadLetters };
}
