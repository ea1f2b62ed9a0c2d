import { conditionalWrite } from "./conditional-write";
import { queryItems, scanItems } from "./query-items";
import { SessionLeases } from "./session-lease";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

export type RunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";
export type MultitaskStrategy = "reject" | "enqueue" | "interrupt" | "rollback";

export interface RunRecord {
  runId: string;
  threadId: string;
  assistantId: string;
  status: RunStatus;
  multitaskStrategy: MultitaskStrategy;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  error?: { code: string; message: string };
  /** a background run's request, kept until the worker runs it */
  kwargs?: Record<string, unknown>;
  /** who asked for it (a background run's worker runs it as them) */
  userId?: string;
  /**
   * when a background run began under its thread's lease: one claimed by a worker waits for the
   * lease `running` but unstarted, and may still be withdrawn (AgentRuns.withdraw)
   */
  startedAt?: string;
}

/** Sort key prefix of run records in a thread's partition; the checkpoint saver ignores them. */
const RUN_PREFIX = "run#";
/**
 * The short lease a run's admission under `reject` holds (a SessionLeases item of its own
 * partition, deleted when the admission is done, swept by TTL after a crash).
 */
export const admissionKey = (threadId: string) => `admission#${threadId}`;
/** How long an admission a crash left behind keeps the thread's `reject` runs out. */
const ADMISSION_MS = 10_000;

/** A run that has not ended: waiting for a worker, or running. */
export const LIVE: ReadonlySet<RunStatus> = new Set(["pending", "running"]);

/**
 * How long a worker's run may wait for its thread: a Lambda's 15 minutes. A run taken longer ago
 * and still not begun lost its worker (a crash), and no longer holds its thread (its message's
 * redelivery marks it lost).
 */
const MAX_WAIT_MS = 15 * 60_000;

/**
 * A run that has not begun: pending, or taken by a worker and waiting for its thread's lease. One
 * that began holds the lease for as long as it runs (so the lease, not its record, says it does).
 */
export const isWaiting = (run: RunRecord) =>
  run.status === "pending" ||
  (run.status === "running" && !run.startedAt && Date.parse(run.updatedAt) + MAX_WAIT_MS > Date.now());

/**
 * The lost-worker error a run is left with when it was found running with nobody running it (its
 * worker or its function stopped: a crash, a timeout).
 */
export const WORKER_LOST = {
  code: "worker_lost",
  message: "the run's worker stopped before it finished (a crash or the worker's time limit)",
};

/** What admitting a run onto an idle thread came to. */
export type Admission = "admitted" | "busy" | "exists";

/**
 * The Agent Server API's run records, in the thread's own partition of the checkpoint table, so
 * they go with the thread when it is deleted and need no table or migration of their own.
 */
export class AgentRuns {
  private readonly doc: DynamoDBDocumentClient;
  private readonly admissions: SessionLeases;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
    this.admissions = new SessionLeases(client, tableName, ADMISSION_MS);
  }

  /** Records a run; `ifNew`: only if no run has its id (false when one had). */
  async put(run: RunRecord, { ifNew = false } = {}): Promise<boolean> {
    try {
      await this.put_(run, ifNew);
      return true;
    } catch (err) {
      if (ifNew && err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /**
   * Records a run only when nothing holds its thread (no run waiting its turn, and nobody holding
   * its lease): `reject`'s admission. The check and the write are made under a short lease of the
   * thread's admission (a conditional put), so of runs admitted at once at most one is let in; a run
   * that finds it taken is busy (the holder is admitting one). A lease rather than one conditional write: DynamoDB cannot condition
   * a write on a query's result, and a transaction conditions only on items it names.
   * `heldElsewhere`: whether the thread is held by what keeps no run record here (its lease, taken
   * by a foreground run or an /api/chat turn).
   */
  async admit(run: RunRecord, heldElsewhere: () => Promise<boolean> = async () => false): Promise<Admission> {
    const lock = await this.admissions.tryAcquire(admissionKey(run.threadId));
    if (!lock) return "busy";
    try {
      const runs = await this.list(run.threadId);
      if (runs.some((r) => r.runId === run.runId)) return "exists";
      if (runs.some(isWaiting)) return "busy";
      // Recorded first, then the thread's lease read (a run that began holds it: a record of one
      // that crashed does not keep the thread busy past its lease). A run that takes the lease
      // after this read finds this one pending and is refused, so the two never both get in.
      await this.put_(run, false);
      if (await heldElsewhere()) {
        await this.remove(run.threadId, run.runId);
        return "busy";
      }
      return "admitted";
    } finally {
      await lock.release();
    }
  }

  /**
   * The thread's runs once no admission (above) is under way, its lease waited for: a run seen
   * pending may be one whose admission is about to take it back, having found the thread held by
   * the reader's own lease. Read so only when that matters: a reader that sees nothing waiting has
   * its answer, since an admission after its read finds its lease. An admission lasts milliseconds;
   * one still held after `waitMs` (a crash left it) is not waited out, and the runs are read anyway.
   */
  async listAdmitted(threadId: string, waitMs = 2_000): Promise<RunRecord[]> {
    const lock = await this.admissions.acquire(admissionKey(threadId), waitMs);
    try {
      return await this.list(threadId);
    } finally {
      await lock?.release();
    }
  }

  private async put_(run: RunRecord, ifNew: boolean): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: run.threadId,
          sk: RUN_PREFIX + run.runId,
          run_id: run.runId,
          assistant_id: run.assistantId,
          status: run.status,
          multitask_strategy: run.multitaskStrategy,
          metadata: run.metadata,
          created_at: run.createdAt,
          updated_at: run.updatedAt,
          ...(run.error ? { error: run.error } : {}),
          ...(run.kwargs ? { kwargs: JSON.stringify(run.kwargs) } : {}),
          ...(run.userId ? { user_id: run.userId } : {}),
          ...(run.startedAt ? { started_at: run.startedAt } : {}),
        },
        ...(ifNew ? { ConditionExpression: "attribute_not_exists(pk)" } : {}),
      }),
    );
  }

  /**
   * Moves a run from one status to another only if it is still in the first: a background run is
   * claimed (pending -> running) by one worker, however often its message is delivered, and a
   * pending run cancelled before a worker claims it is never run. False when it had moved on.
   */
  async transition(threadId: string, runId: string, from: RunStatus, to: RunStatus): Promise<boolean> {
    return conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: threadId, sk: RUN_PREFIX + runId },
          UpdateExpression: "SET #s = :to, updated_at = :u",
          ConditionExpression: "#s = :from",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: { ":to": to, ":from": from, ":u": new Date().toISOString() },
        }),
      ),
    );
  }

  /**
   * A background run begins, under its thread's lease: false when it was withdrawn while it
   * waited (interrupted, or deleted), and so must not run.
   */
  async markStarted(threadId: string, runId: string): Promise<boolean> {
    const now = new Date().toISOString();
    return conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: threadId, sk: RUN_PREFIX + runId },
          UpdateExpression: "SET started_at = :now, updated_at = :now",
          ConditionExpression: "#s = :running AND attribute_not_exists(started_at)",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: { ":now": now, ":running": "running" },
        }),
      ),
    );
  }

  /**
   * Stops a run that has not begun (pending, or claimed by a worker and waiting for the thread's
   * lease) so it never runs: interrupted, or deleted for a rollback. False when it had begun (only
   * its lease can stop it then) or was over.
   */
  async withdraw(threadId: string, runId: string, action: "interrupt" | "rollback"): Promise<boolean> {
    const unstarted = {
      Key: { pk: threadId, sk: RUN_PREFIX + runId },
      ConditionExpression: "#s = :pending OR (#s = :running AND attribute_not_exists(started_at))",
      ExpressionAttributeNames: { "#s": "status" },
    };
    const states = { ":pending": "pending", ":running": "running" };
    return conditionalWrite(
      this.doc.send(
        action === "rollback"
          ? new DeleteCommand({ TableName: this.tableName, ...unstarted, ExpressionAttributeValues: states })
          : new UpdateCommand({
              TableName: this.tableName,
              ...unstarted,
              UpdateExpression: "SET #s = :interrupted, updated_at = :u",
              ExpressionAttributeValues: { ...states, ":interrupted": "interrupted", ":u": new Date().toISOString() },
            }),
      ),
    );
  }

  /** Deletes a run's record unless it is running (a worker holds it); false when it was. */
  async remove(threadId: string, runId: string): Promise<boolean> {
    return conditionalWrite(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: threadId, sk: RUN_PREFIX + runId },
          ConditionExpression: "#s <> :running",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: { ":running": "running" },
        }),
      ),
    );
  }

  /**
   * Sets a run's status (and its error, when it failed); `from`: only while its status is that
   * one. False when the run is no longer on record, or no longer `from`.
   */
  async finish(
    threadId: string,
    runId: string,
    status: RunStatus,
    error?: RunRecord["error"],
    { from }: { from?: RunStatus } = {},
  ): Promise<boolean> {
    // Only a run still on record: one deleted meanwhile (with its thread, by an erasure) stays
    // gone, where an unconditional update made a record of its outcome alone.
    return conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: threadId, sk: RUN_PREFIX + runId },
          UpdateExpression: error ? "SET #s = :s, updated_at = :u, #e = :e" : "SET #s = :s, updated_at = :u",
          ConditionExpression: from ? "#s = :from" : "attribute_exists(pk)",
          ExpressionAttributeNames: { "#s": "status", ...(error ? { "#e": "error" } : {}) },
          ExpressionAttributeValues: {
            ":s": status,
            ":u": new Date().toISOString(),
            ...(error ? { ":e": error } : {}),
            ...(from ? { ":from": from } : {}),
          },
        }),
      ),
    );
  }

  async get(threadId: string, runId: string): Promise<RunRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: threadId, sk: RUN_PREFIX + runId },
        ConsistentRead: true,
      }),
    );
    return out.Item ? runOf(threadId, out.Item) : undefined;
  }

  /** Every run of a thread, oldest first (a user's export). */
  /**
   * Every thread's runs still pending: a Scan of the whole table, for the local stack's restart
   * only (its queue lives in the process; SQS keeps the messages in AWS). Never on a request's path.
   */
  async pendingEverywhere(): Promise<RunRecord[]> {
    const items = await scanItems(this.doc, {
      TableName: this.tableName,
      FilterExpression: "begins_with(sk, :r) AND #s = :pending",
      ExpressionAttributeNames: { "#s": "status" },
      ExpressionAttributeValues: { ":r": RUN_PREFIX, ":pending": "pending" },
    });
    return items.filter((item) => typeof item.run_id === "string").map((item) => runOf(item.pk as string, item));
  }

  async list(threadId: string): Promise<RunRecord[]> {
    const items = await queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :r)",
      ExpressionAttributeValues: { ":pk": threadId, ":r": RUN_PREFIX },
      ConsistentRead: true,
    });
    // An item with no run id is no run: an outcome an older version wrote onto a run deleted meanwhile.
    const runs = items.filter((item) => typeof item.run_id === "string").map((item) => runOf(threadId, item));
    return runs.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}

const runOf = (threadId: string, item: Record<string, unknown>): RunRecord => ({
  runId: item.run_id as string,
  threadId,
  assistantId: item.assistant_id as string,
  status: item.status as RunStatus,
  multitaskStrategy: item.multitask_strategy as MultitaskStrategy,
  metadata: (item.metadata as Record<string, unknown> | undefined) ?? {},
  createdAt: item.created_at as string,
  updatedAt: item.updated_at as string,
  ...(item.error ? { error: item.error as RunRecord["error"] } : {}),
  ...(typeof item.kwargs === "string" ? { kwargs: JSON.parse(item.kwargs) as Record<string, unknown> } : {}),
  ...(typeof item.user_id === "string" ? { userId: item.user_id } : {}),
  ...(typeof item.started_at === "string" ? { startedAt: item.started_at } : {}),
});
