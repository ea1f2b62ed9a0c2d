import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { randomUUID } from "node:crypto";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { type GuardedUpdate, type TogetherItem, writeGuarded, writeTogether } from "./write-together";

/** Sort key of the lease record in a thread's partition; the checkpoint saver ignores it. */
export const LEASE_SORT_KEY = "lease";

/**
 * How long a lease lasts without a heartbeat. A run renews it every third of that while it is
 * alive, so a long run keeps its session however long it takes, and a crashed run's session is
 * free again at most this long after its last heartbeat.
 */
export const LEASE_MS = 30_000;

/**
 * How often a running run reads its lease item for a cancel request (requestCancel), so a cancel,
 * interrupt or rollback takes effect within a second of the request: one strongly consistent
 * GetItem (1 read unit) per interval while a run goes on. A run shorter than this reads none.
 */
export const CANCEL_POLL_MS = 500;

/**
 * The run a lease is held for, when it is an Agent Server run: written with the lease, so a cancel
 * naming one run marks the lease only while that run holds it (never a run that took the thread
 * after it, nor the one a run waiting behind it waits for).
 */
export const LEASE_RUN_ATTRIBUTE = "lease_run";

export interface Lease {
  /**
   * Aborted when the lease is lost: a renewal found another holder, or could not be made before
   * the lease ran out. A run must stop then, since another may now be writing the same thread.
   * Also aborted, with RunCancelled, when another run asked this one to stop (requestCancel):
   * the lease is still held then, so the run may tidy its thread before it releases it.
   */
  readonly signal: AbortSignal;
  /**
   * Lets the lease go. A lease that carries a turn's mark (HeldLeaseItem.mark) clears it by
   * default: the turn saw its writes through or undid them. `keep` leaves it for the next holder
   * to repair (the turn did neither); `restore` puts back the mark of an earlier turn that this
   * holder took over but could not repair.
   */
  release(options?: ReleaseOptions): Promise<void>;
}

export interface ReleaseOptions {
  mark?: "clear" | "keep" | { restore: string };
  /**
   * An update to write with the release, in the same request (a turn's token count: the release
   * and it are the turn's last writes, and one request is a round trip less than two). Written on
   * its own when the lease was no longer this holder's: it is owed whoever holds the lease.
   */
  alongside?: GuardedUpdate;
  /** attributes the release sets on the record that holds the lease (a turn's token count), where it stays */
  set?: Record<string, number>;
}

export class LeaseLost extends Error {
  constructor(
    sessionId: string,
    /** no renewal reached the table for a whole lease (it may be down), rather than another run holding it */
    readonly unrenewed = false,
  ) {
    super(
      unrenewed
        ? `the lease on session ${sessionId} could not be renewed: the table did not answer`
        : `the lease on session ${sessionId} was lost`,
    );
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
 * Asks the run holding a lease item to stop: the item is marked with the holder's token
 * (`cancel_for`) and the action, and the holder's heartbeat reads them in its renewal's response
 * and aborts with RunCancelled. Naming the token means a mark left behind never stops a later
 * run. False when no run holds the lease.
 */
export async function requestCancel(
  doc: DynamoDBDocumentClient,
  item: Pick<HeldLeaseItem, "tableName" | "key" | "tokenAttribute"> & {
    /** the attribute naming the session's owner, and who asks: only the owner's request marks the run */
    owner?: { attribute: string; userId: string };
    /** the run the request is for: only a lease that run holds is marked (LEASE_RUN_ATTRIBUTE) */
    runId?: string;
  },
  action: CancelAction,
): Promise<boolean> {
  try {
    await doc.send(
      new UpdateCommand({
        TableName: item.tableName,
        Key: item.key,
        UpdateExpression: "SET cancel_for = #t, cancel_action = :a",
        ConditionExpression: `attribute_exists(#t) AND lease_until >= :now${item.owner ? " AND #o = :o" : ""}${item.runId ? ` AND ${LEASE_RUN_ATTRIBUTE} = :run` : ""}`,
        ExpressionAttributeNames: { "#t": item.tokenAttribute, ...(item.owner ? { "#o": item.owner.attribute } : {}) },
        ExpressionAttributeValues: {
          ":a": action,
          ":now": Date.now(),
          ...(item.owner ? { ":o": item.owner.userId } : {}),
          ...(item.runId ? { ":run": item.runId } : {}),
        },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
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

  /** Asks the run holding this session's lease item to stop (see requestCancel). */
  requestCancel(sessionId: string, action: CancelAction): Promise<boolean> {
    return requestCancel(
      this.doc,
      { tableName: this.tableName, key: { pk: sessionId, sk: LEASE_SORT_KEY }, tokenAttribute: "token" },
      action,
    );
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

  private expiry(now: number) {
    return {
      lease_until: now + this.leaseMs,
      // DynamoDB's TTL sweeps leases a crash left behind; the conditions never rely on it.
      [CHECKPOINT_TABLE.ttlAttribute]: Math.ceil((now + this.leaseMs) / 1000) + 3600,
    };
  }

  private heldLease(sessionId: string, token: string, until: number): Lease {
    return holdLease(this.doc, {
      sessionId,
      tableName: this.tableName,
      key: { pk: sessionId, sk: LEASE_SORT_KEY },
      tokenAttribute: "token",
      token,
      heldUntil: until,
      leaseMs: this.leaseMs,
      renewal: (now) => this.expiry(now),
      release: "delete",
    });
  }
}

/** A lease held on an item: where it is, whose token, and how it is renewed and let go. */
export interface HeldLeaseItem {
  sessionId: string;
  tableName: string;
  key: Record<string, string>;
  /** the attribute holding the holder's token */
  tokenAttribute: string;
  token: string;
  heldUntil: number;
  leaseMs: number;
  /** the attributes a heartbeat sets (the new lease_until, and a TTL where the item has its own) */
  renewal: (now: number) => Record<string, number>;
  /** "delete": the item is the lease; "remove": the lease is two attributes on an item that stays */
  release: "delete" | "remove";
  /** ("remove") the attribute naming the turn that holds the lease, which its release clears, keeps or restores */
  mark?: string;
  /** how often to look for a cancel request between heartbeats (CANCEL_POLL_MS) */
  cancelPollMs?: number;
  /** ("remove") a count on the item its release raises, as its takings do: a read before the release is then known to be stale */
  generation?: string;
}

/**
 * A held lease: renewed by a heartbeat every third of its length while its run is alive, its
 * signal aborted when a renewal finds another token (or none could be made for a whole lease),
 * and released by its holder only. Every write is conditional on this run's token.
 */
export function holdLease(doc: DynamoDBDocumentClient, item: HeldLeaseItem): Lease {
  const lost = new AbortController();
  let heldUntil = item.heldUntil;
  const held = {
    TableName: item.tableName,
    Key: item.key,
    ConditionExpression: "#t = :token",
    ExpressionAttributeNames: { "#t": item.tokenAttribute } as Record<string, string>,
    ExpressionAttributeValues: { ":token": item.token } as Record<string, unknown>,
  };
  const loseIt = (reason: Error = new LeaseLost(item.sessionId)) => {
    clearInterval(heartbeat);
    if (!lost.signal.aborted) lost.abort(reason);
  };
  const renew = async () => {
    const now = Date.now();
    // Renewals failed for a whole lease: another may hold it now.
    if (now >= heldUntil) return loseIt(new LeaseLost(item.sessionId, true));
    const values = Object.entries(item.renewal(now));
    try {
      const renewed = await doc.send(
        new UpdateCommand({
          ...held,
          // The same round trip reads a cancel request (requestCancel).
          ReturnValues: "ALL_NEW",
          UpdateExpression: `SET ${values.map((_, i) => `#r${i} = :r${i}`).join(", ")}`,
          ExpressionAttributeNames: {
            ...held.ExpressionAttributeNames,
            ...Object.fromEntries(values.map(([name], i) => [`#r${i}`, name])),
          },
          ExpressionAttributeValues: {
            ...held.ExpressionAttributeValues,
            ...Object.fromEntries(values.map(([, value], i) => [`:r${i}`, value])),
          },
        }),
      );
      heldUntil = now + item.leaseMs;
      if (renewed.Attributes?.cancel_for === item.token)
        loseIt(new RunCancelled(item.sessionId, renewed.Attributes.cancel_action as CancelAction));
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) loseIt();
      // Otherwise a passing fault: the next beat tries again, well inside the lease.
    }
  };
  /**
   * A cancel request, read between heartbeats: the heartbeat alone (every 10 s) would let a 2 s
   * reply ignore it. Hand-written polling: DynamoDB cannot push a change to a running Lambda.
   */
  const lookForCancel = async () => {
    try {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: item.tableName,
          Key: item.key,
          ConsistentRead: true,
          ProjectionExpression: "cancel_for, cancel_action, #t",
          ExpressionAttributeNames: { "#t": item.tokenAttribute },
        }),
      );
      if (Item?.[item.tokenAttribute] !== item.token) return; // the heartbeat decides whether it was lost
      if (Item.cancel_for === item.token) loseIt(new RunCancelled(item.sessionId, Item.cancel_action as CancelAction));
    } catch {
      // A passing fault: the next look, or the heartbeat, reads it.
    }
  };
  // unref: a heartbeat alone never keeps a process (or a test) alive.
  const heartbeat = setInterval(() => void renew(), Math.max(10, Math.floor(item.leaseMs / 3)));
  heartbeat.unref();
  const cancelPoll = setInterval(() => void lookForCancel(), item.cancelPollMs ?? CANCEL_POLL_MS);
  cancelPoll.unref();
  lost.signal.addEventListener("abort", () => clearInterval(cancelPoll), { once: true });
  return {
    signal: lost.signal,
    release: async (options) => {
      clearInterval(heartbeat);
      clearInterval(cancelPoll);
      const mark = item.mark === undefined ? "keep" : (options?.mark ?? "clear");
      const restore = typeof mark === "object" ? mark.restore : undefined;
      const set = Object.entries(options?.set ?? {});
      const sets = [...(restore !== undefined ? ["#m = :m"] : []), ...set.map((_, i) => `#s${i} = :s${i}`)];
      const own: TogetherItem =
        item.release === "delete"
          ? { Delete: held }
          : {
              Update: {
                ...held,
                UpdateExpression: `${sets.length ? `SET ${sets.join(", ")} ` : ""}REMOVE #t, lease_until${mark === "clear" ? ", #m" : ""}${item.generation ? " ADD #g :one" : ""}`,
                ExpressionAttributeNames: {
                  ...held.ExpressionAttributeNames,
                  ...(mark === "keep" ? {} : { "#m": item.mark! }),
                  ...Object.fromEntries(set.map(([name], i) => [`#s${i}`, name])),
                  ...(item.generation ? { "#g": item.generation } : {}),
                },
                ExpressionAttributeValues: {
                  ...held.ExpressionAttributeValues,
                  ...(restore !== undefined ? { ":m": restore } : {}),
                  ...Object.fromEntries(set.map(([, value], i) => [`:s${i}`, value])),
                  ...(item.generation ? { ":one": 1 } : {}),
                },
              },
            };
      if (options?.alongside) return releaseWith(doc, own, options.alongside);
      try {
        await doc.send(own.Delete ? new DeleteCommand(own.Delete) : new UpdateCommand(own.Update!));
      } catch (err) {
        // Already expired and taken by another run (or the session deleted): not ours to touch.
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
    },
  };
}

/**
 * A release and another update in one transaction. Refused over the lease (no longer this
 * holder's: not ours to touch), the update is written on its own; refused over the update's own
 * condition, with its `otherwise` instead.
 */
async function releaseWith(doc: DynamoDBDocumentClient, own: TogetherItem, alongside: GuardedUpdate): Promise<void> {
  let guarded = alongside;
  for (;;) {
    const refused = await writeTogether(doc, [own, { Update: guarded.update }]);
    if (refused === undefined) return;
    if (refused[0] === "ConditionalCheckFailed") return writeGuarded(doc, guarded);
    if (!guarded.otherwise) throw new Error("an update without a condition was refused");
    guarded = { update: guarded.otherwise };
  }
}
