import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { CHECKPOINT_TABLE } from "./checkpoint-table";

/** Sort key of the lease record in a thread's partition; the checkpoint saver ignores it. */
export const LEASE_SORT_KEY = "lease";

/**
 * How long a lease lasts without a heartbeat. A run renews it every third of that while it is
 * alive, so a long run keeps its session however long it takes, and a crashed run's session is
 * free again at most this long after its last heartbeat.
 */
export const LEASE_MS = 30_000;

export interface Lease {
  /**
   * Aborted when the lease is lost: a renewal found another holder, or could not be made before
   * the lease ran out. A run must stop then, since another may now be writing the same thread.
   * Also aborted, with RunCancelled, when another run asked this one to stop (requestCancel):
   * the lease is still held then, so the run may tidy its thread before it releases it.
   */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export class LeaseLost extends Error {
  constructor(sessionId: string) {
    super(`the lease on session ${sessionId} was lost`);
    this.name = "LeaseLost";
  }
}

/** How a waiting run asks the running one to stop: keep what it wrote, or take it back out. */
export type CancelAction = "interrupt" | "rollback";

/** The abort reason when another run asked this one to stop (the Agent Server API's multitask_strategy). */
export class RunCancelled extends Error {
  constructor(
    sessionId: string,
    readonly action: CancelAction,
  ) {
    super(`the run on session ${sessionId} was asked to stop (${action})`);
    this.name = "RunCancelled";
  }
}

/**
 * One run per session at a time. Two runs on one checkpoint would each append to the same
 * parent and the later checkpoint would drop the other's message. The lease is a conditional
 * write with an expiry in the thread's own partition: taken when absent or expired, renewed by
 * its holder's heartbeat, released by its holder only, and taken over only after it expired.
 */
export class SessionLeases {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly leaseMs = LEASE_MS,
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
          Item: { pk: sessionId, sk: LEASE_SORT_KEY, token, ...this.expiry(now) },
          ConditionExpression: "attribute_not_exists(pk) OR lease_until < :now",
          ExpressionAttributeValues: { ":now": now },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
    return this.heldLease(sessionId, token, now + this.leaseMs);
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

  /**
   * Asks the run holding the session's lease to stop, through a flag on the lease item that its
   * heartbeat reads; the run then aborts with RunCancelled and releases the lease. False when no
   * run holds it. The next lease taken is a new item, so the flag never outlives its run.
   */
  async requestCancel(sessionId: string, action: CancelAction): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: LEASE_SORT_KEY },
          UpdateExpression: "SET cancel = :a",
          ConditionExpression: "attribute_exists(pk) AND lease_until >= :now",
          ExpressionAttributeValues: { ":a": action, ":now": Date.now() },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  private expiry(now: number) {
    return {
      lease_until: now + this.leaseMs,
      // DynamoDB's TTL sweeps leases a crash left behind; the conditions never rely on it.
      [CHECKPOINT_TABLE.ttlAttribute]: Math.ceil((now + this.leaseMs) / 1000) + 3600,
    };
  }

  private heldLease(sessionId: string, token: string, until: number): Lease {
    const lost = new AbortController();
    let heldUntil = until;
    const loseIt = (reason: Error = new LeaseLost(sessionId)) => {
      clearInterval(heartbeat);
      if (!lost.signal.aborted) lost.abort(reason);
    };
    const renew = async () => {
      const now = Date.now();
      if (now >= heldUntil) return loseIt(); // renewals failed for a whole lease: another may hold it
      try {
        const renewed = await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: sessionId, sk: LEASE_SORT_KEY },
            // The same round trip reads the cancel flag (requestCancel).
            ReturnValues: "ALL_NEW",
            UpdateExpression: "SET lease_until = :until, #ttl = :ttl",
            ConditionExpression: "#t = :token",
            ExpressionAttributeNames: { "#t": "token", "#ttl": CHECKPOINT_TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ":token": token,
              ":until": this.expiry(now).lease_until,
              ":ttl": this.expiry(now)[CHECKPOINT_TABLE.ttlAttribute],
            },
          }),
        );
        heldUntil = now + this.leaseMs;
        const cancel = renewed.Attributes?.cancel as CancelAction | undefined;
        if (cancel) loseIt(new RunCancelled(sessionId, cancel));
      } catch (err) {
        if (err instanceof ConditionalCheckFailedException) loseIt();
        // Otherwise a passing fault: the next beat tries again, well inside the lease.
      }
    };
    // unref: a heartbeat alone never keeps a process (or a test) alive.
    const heartbeat = setInterval(() => void renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    return {
      signal: lost.signal,
      release: async () => {
        clearInterval(heartbeat);
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
}
