import { queryItems } from "./query-items";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { AppError } from "../errors";
import { holdsKey, jsonBytes, MAX_METADATA_BYTES } from "../storable-json";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { backoff, CONFLICT_RETRY } from "./batch";
import { laterThan } from "./updated-at";
import { conditionalWrite } from "./conditional-write";

const metadataTooLarge = () =>
  new AppError(
    400,
    "metadata_too_large",
    `metadata: with this patch the thread's would pass ${MAX_METADATA_BYTES} bytes of JSON; remove keys (set them to null) first`,
  );

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type Metadata = Record<string, unknown>;

/** A thread as the Agent Server API describes it; the conversation itself is in the checkpoints. */
export interface ThreadRecord {
  threadId: string;
  userId: string;
  metadata: Metadata;
  status: ThreadStatus;
  createdAt: string;
  updatedAt: string;
  /**
   * The state's values after the last run or state write, as JSON (what a thread list shows);
   * absent before any, or when they were over VALUES_MAX_BYTES (then read from the checkpoint).
   */
  values?: unknown;
  /** pending interrupts, by the id of the task they stopped */
  interrupts?: Record<string, unknown[]>;
}

/** Values past this many bytes of JSON are not copied into the thread's item (DynamoDB's items end at 400 KB). */
export const VALUES_MAX_BYTES = 96 * 1024;

/**
 * The caller's threads, for the Agent Server API's thread routes. Each is one item in a per-user
 * partition of the checkpoint table (`threads#<user>`, sort key the thread id), so a user's
 * threads are one Query and nobody else's can appear in it; the session's owner record
 * (session-owners.ts) stays the authority on who owns the thread. Kept in DynamoDB rather than
 * Supabase so the API works in a deployment without Supabase, and consistently with the owner.
 */
export class AgentThreads {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly ttlDays?: number,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /** Records a thread; false when the caller already has one with this id. */
  async create(record: ThreadRecord): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...this.key(record.userId, record.threadId), ...toItem(record), ...this.expiry() },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async get(userId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(userId, threadId), ConsistentRead: true }),
    );
    return out.Item ? fromItem(out.Item) : undefined;
  }

  /**
   * Merges `metadata` into the thread's (a key set to null is removed) and sets its status. The
   * merge is of the item as read, written on the condition that it is still as read (its
   * updated_at, which every write moves forward), and read again when it is not: two patches at
   * once both land, neither overwriting the other's keys.
   */
  async update(
    userId: string,
    threadId: string,
    change: { metadata?: Metadata; status?: ThreadStatus },
  ): Promise<ThreadRecord | undefined> {
    for (let attempt = 0; attempt < CONFLICT_RETRY.maxAttempts; attempt++) {
      if (attempt > 0) await backoff(attempt, CONFLICT_RETRY);
      const current = await this.get(userId, threadId);
      if (!current) return undefined;
      const metadata = { ...current.metadata };
      for (const [k, v] of Object.entries(change.metadata ?? {})) {
        if (v === null) delete metadata[k];
        else metadata[k] = v;
      }
      // Each patch is bounded by its schema; what they add up to is bounded here, before the write.
      if (jsonBytes(metadata) > MAX_METADATA_BYTES) throw metadataTooLarge();
      const next: ThreadRecord = {
        ...current,
        metadata,
        status: change.status ?? current.status,
        updatedAt: laterThan(current.updatedAt),
      };
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: this.key(userId, threadId),
            // Only what changed: a run starting meanwhile keeps the status it wrote.
            UpdateExpression: change.status
              ? "SET metadata = :m, #s = :s, updated_at = :u"
              : "SET metadata = :m, updated_at = :u",
            ConditionExpression: "attribute_exists(pk) AND updated_at = :seen",
            ...(change.status ? { ExpressionAttributeNames: { "#s": "status" } } : {}),
            ExpressionAttributeValues: {
              ":m": next.metadata,
              ":u": next.updatedAt,
              ":seen": current.updatedAt,
              ...(change.status ? { ":s": change.status } : {}),
            },
          }),
        );
        return next;
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
    }
    throw new AppError(409, "thread_busy", "the thread's metadata kept changing meanwhile; retry");
  }

  /**
   * A run started on the thread: it is busy, and its metadata names the graph and assistant that
   * run it (how LangGraph's clients list a graph's threads). A session started elsewhere (/api/chat)
   * gets its item here. One write when the item exists.
   */
  async started(userId: string, threadId: string, by: { graph_id: string; assistant_id: string }): Promise<void> {
    const now = new Date().toISOString();
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: this.key(userId, threadId),
            UpdateExpression: "SET metadata.graph_id = :g, metadata.assistant_id = :a, #s = :s, updated_at = :u",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: { "#s": "status" },
            ExpressionAttributeValues: { ":g": by.graph_id, ":a": by.assistant_id, ":s": "busy", ":u": now },
          }),
        );
        return;
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
      const created = await this.create({
        threadId,
        userId,
        metadata: { ...by },
        status: "busy",
        createdAt: now,
        updatedAt: now,
      });
      if (created) return;
    }
  }

  /**
   * A run waits on the thread (made, not yet begun): busy, as LangGraph's server shows it from a
   * run's creation until no run is left waiting, naming the graph and assistant of the run made
   * (`by`). False when the thread has no item: unlike `started`, this never makes one, so a run
   * made as its thread is erased cannot bring the thread's item back.
   */
  async busy(userId: string, threadId: string, by?: { graph_id: string; assistant_id: string }): Promise<boolean> {
    return conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(userId, threadId),
          UpdateExpression: `SET #s = :s, updated_at = :u${by ? ", metadata.graph_id = :g, metadata.assistant_id = :a" : ""}`,
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: {
            ":s": "busy",
            ":u": new Date().toISOString(),
            ...(by ? { ":g": by.graph_id, ":a": by.assistant_id } : {}),
          },
        }),
      ),
    );
  }

  /**
   * What a run or a state write left: the thread's status, its values and pending interrupts.
   * Values too large for the item are left out (the thread's state has them).
   */
  async settle(
    userId: string,
    threadId: string,
    change: { status: ThreadStatus; values: unknown; interrupts: Record<string, unknown[]> },
    /** only if the item is still as last updated then (a read's repair must not undo a write since) */
    ifUpdatedAt?: string,
  ): Promise<void> {
    // As JSON: what the API answers (no undefined fields, which DynamoDB's document client refuses).
    const values = JSON.stringify(change.values ?? null);
    // Values too large for the item, or holding a key its map cannot (a message's kwargs may), are
    // left out: the thread's reads take them from its state instead.
    const fits = Buffer.byteLength(values) <= VALUES_MAX_BYTES && !holdsKey(change.values, "constructor");
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(userId, threadId),
          UpdateExpression: `SET #s = :s, updated_at = :u, interrupts = :i, ${fits ? "#v = :v" : "#v = :none"}`,
          ConditionExpression: `attribute_exists(pk)${ifUpdatedAt ? " AND updated_at = :seen" : ""}`,
          ExpressionAttributeNames: { "#s": "status", "#v": "values" },
          ExpressionAttributeValues: {
            ":s": change.status,
            ":u": new Date().toISOString(),
            ":i": JSON.parse(JSON.stringify(change.interrupts)),
            ...(fits ? { ":v": JSON.parse(values) } : { ":none": null }),
            ...(ifUpdatedAt ? { ":seen": ifUpdatedAt } : {}),
          },
        }),
      );
    } catch (err) {
      // The thread went (deleted with its session), or changed since: nothing to describe.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async remove(userId: string, threadId: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: this.key(userId, threadId) }));
  }

  /** Every thread of the user's, in no particular order. */
  async list(userId: string): Promise<ThreadRecord[]> {
    const items = await queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": partition(userId) },
    });
    return items.map(fromItem);
  }

  private key(userId: string, threadId: string) {
    return { pk: partition(userId), sk: threadId };
  }

  private expiry(): Record<string, number> {
    return this.ttlDays === undefined
      ? {}
      : { [CHECKPOINT_TABLE.ttlAttribute]: Math.floor(Date.now() / 1000) + Math.round(this.ttlDays * 86_400) };
  }
}

// Session ids are UUIDs, so this prefix can never be a session's partition.
const partition = (userId: string) => `threads#${userId}`;

const toItem = (r: ThreadRecord) => ({
  thread_id: r.threadId,
  user_id: r.userId,
  metadata: r.metadata,
  status: r.status,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
  ...(r.values !== undefined ? { values: r.values } : {}),
  ...(r.interrupts !== undefined ? { interrupts: r.interrupts } : {}),
});

const fromItem = (item: Record<string, unknown>): ThreadRecord => ({
  threadId: item.thread_id as string,
  userId: item.user_id as string,
  metadata: (item.metadata as Metadata | undefined) ?? {},
  status: (item.status as ThreadStatus | undefined) ?? "idle",
  createdAt: item.created_at as string,
  updatedAt: item.updated_at as string,
  ...(item.values !== undefined && item.values !== null ? { values: item.values } : {}),
  ...(item.interrupts !== undefined ? { interrupts: item.interrupts as Record<string, unknown[]> } : {}),
});
