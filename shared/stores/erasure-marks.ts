import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { hashedUserId } from "./user-usage";

/**
 * A user's erasure mark: a partition of its own under a hash of the user's id (it names nobody),
 * apart from the usage items, which another function's role may write (the "usage" grant).
 */
const markKey = (userId: string) => ({ pk: `erasure#${hashedUserId(userId)}`, sk: "erasure" });
/** An erasure runs in one API call (29 s): one begun longer ago than this and never ended died. */
const LONGEST_ERASURE_MS = 15 * 60_000;
/** Slack for the clocks of two functions, which write and compare these times (Lambda's keep within milliseconds of each other). */
const CLOCK_SLACK_MS = 1_000;
/** The mark outlives any export that could have overlapped it. */
const KEEP_SECONDS = 2 * 86_400;

/**
 * When each user's erasures ran, so that what an export wrote after it read (its link's object)
 * is not left behind by an erasure that emptied the user's folder meanwhile: an erasure counts
 * itself in before it deletes anything and out when it stops, however it stops, and an export
 * that overlapped one deletes what it wrote. A count, not one erasure's times: two erasures of a
 * user at once (a retry after a gateway timeout) must not read as ended when the first one ends.
 * Hand-written beside the usage counters: nothing in Powertools or the SDK keeps such a window.
 */
export class ErasureMarks {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /** An erasure of `userId` begins: written before anything is deleted. */
  async began(userId: string): Promise<void> {
    const at = this.now();
    await this.update(userId, "ADD running :one SET began_at = :at, #e = :e", {
      ":one": 1,
      ":at": at,
      ":e": Math.ceil(at / 1000) + KEEP_SECONDS,
    });
  }

  /** An erasure of `userId` stopped: done, or failed part-way (a stopped one deletes nothing more). */
  async ended(userId: string): Promise<void> {
    await this.update(userId, "ADD running :minus SET ended_at = :at", { ":minus": -1, ":at": this.now() });
  }

  /**
   * Whether an erasure of `userId` ran at any moment since `since` (epoch ms): one still running,
   * or one that stopped after it. Asked after the write it guards, so an erasure beginning later
   * finds that write in the folder it empties.
   */
  async ranSince(userId: string, since: number): Promise<boolean> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: markKey(userId), ConsistentRead: true }),
    );
    const item = out.Item;
    if (!item) return false;
    // Counted in and never out for longer than an erasure can run: those died, and stop nothing.
    const running = Number(item.running ?? 0) > 0 && Number(item.began_at) + LONGEST_ERASURE_MS > this.now();
    return running || Number(item.ended_at ?? 0) >= since - CLOCK_SLACK_MS;
  }

  private async update(userId: string, expression: string, values: Record<string, unknown>) {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: markKey(userId),
        UpdateExpression: expression,
        ...(expression.includes("#e") ? { ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute } } : {}),
        ExpressionAttributeValues: values,
      }),
    );
  }
}
