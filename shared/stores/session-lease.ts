import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint/schema";

/** Sort key of the lease record in a thread's partition; the checkpoint saver ignores it. */
export const LEASE_SORT_KEY = "lease";

export interface Lease {
  release(): Promise<void>;
}

/**
 * One run per session at a time. Two runs on one checkpoint would each append to the same
 * parent and the later checkpoint would drop the other's message. The lease is a conditional
 * write with an expiry in the thread's own partition: taken when absent or expired, released
 * by its holder only, and stolen only after it expired (a crashed run cannot block a session
 * for longer than the lease).
 */
export class SessionLeases {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly leaseMs = 60_000,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /** The lease, or undefined when another run holds it. */
  async tryAcquire(sessionId: string): Promise<Lease | undefined> {
    const token = randomUUID();
    const now = Date.now();
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: sessionId,
            sk: LEASE_SORT_KEY,
            token,
            lease_until: now + this.leaseMs,
            // DynamoDB's TTL sweeps leases a crash left behind; the condition below never relies on it.
            [CHECKPOINT_TABLE.ttlAttribute]: Math.ceil((now + this.leaseMs) / 1000) + 3600,
          },
          ConditionExpression: "attribute_not_exists(pk) OR lease_until < :now",
          ExpressionAttributeValues: { ":now": now },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
    return {
      release: async () => {
        try {
          await this.doc.send(
            new DeleteCommand({
              TableName: this.tableName,
              Key: { pk: sessionId, sk: LEASE_SORT_KEY },
              ConditionExpression: "#t = :token",
              ExpressionAttributeNames: { "#t": "token" },
              ExpressionAttributeValues: { ":token": token },
            }),
          );
        } catch (err) {
          // Already expired and taken by another run: it is theirs now.
          if (!(err instanceof ConditionalCheckFailedException)) throw err;
        }
      },
    };
  }

  /** Waits for the lease, polling with backoff, for at most `waitMs`. */
  async acquire(sessionId: string, waitMs: number): Promise<Lease | undefined> {
    const deadline = Date.now() + waitMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      const lease = await this.tryAcquire(sessionId);
      if (lease || Date.now() + delay > deadline) return lease;
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    }
  }
}
