import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { usagePartition } from "./user-usage";

/** Sort key of a user's erasure mark, in the user's hashed usage partition (it names nobody). */
const MARK_SORT_KEY = "erasure";
/** An erasure runs in one API call (29 s): one begun longer ago than this and never ended died. */
const LONGEST_ERASURE_MS = 15 * 60_000;
/** Slack for the clocks of two functions, which write and compare these times (Lambda's keep within milliseconds of each other). */
const CLOCK_SLACK_MS = 1_000;
/** The mark outlives any export that could have overlapped it. */
const KEEP_SECONDS = 2 * 86_400;

/**
 * When each user's last erasure ran, so that what an export wrote after it read (its link's
 * object) is not left behind by an erasure that emptied the user's folder meanwhile: the
 * erasure marks its start before it deletes anything and its end after, and an export that
 * overlapped one deletes what it wrote. Hand-written beside the usage counters (same hashed
 * partition): nothing in Powertools or the SDK keeps such a window.
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
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: usagePartition(userId),
          sk: MARK_SORT_KEY,
          began_at: at,
          [CHECKPOINT_TABLE.ttlAttribute]: Math.ceil(at / 1000) + KEEP_SECONDS,
        },
      }),
    );
  }

  /** The erasure of `userId` ended, its folder emptied last. */
  async ended(userId: string): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: usagePartition(userId), sk: MARK_SORT_KEY },
        UpdateExpression: "SET ended_at = :at",
        ExpressionAttributeValues: { ":at": this.now() },
      }),
    );
  }

  /**
   * Whether an erasure of `userId` ran at any moment since `since` (epoch ms): one still running,
   * or one that ended after it. Asked after the write it guards, so an erasure beginning later
   * finds that write in the folder it empties.
   */
  async ranSince(userId: string, since: number): Promise<boolean> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: usagePartition(userId), sk: MARK_SORT_KEY },
        ConsistentRead: true,
      }),
    );
    const item = out.Item;
    if (!item) return false;
    const began = Number(item.began_at);
    const ended = item.ended_at === undefined ? undefined : Number(item.ended_at);
    // Each mark is the user's last erasure's: a later one overwrote an earlier one's times.
    const endedBy = ended !== undefined && ended >= began ? ended : began + LONGEST_ERASURE_MS;
    return endedBy >= since - CLOCK_SLACK_MS;
  }
}
