import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { IDEMPOTENCY_TABLE } from "../idempotency";

/**
 * "Has this happened already?" markers, in the idempotency table: a conditional put that
 * succeeds once per key (an Intercom notification id, an answered customer part), then
 * expires. Used where something must happen at most once, so it is claimed before it happens.
 */
export class OnceMarkers {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly ttlSeconds = 14 * 86_400,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /**
   * True the first time `key` is claimed, false ever after (until it expires). `note` is kept with
   * the claim (markOf reads it): what a later reader should know of how it was made.
   */
  async claim(key: string, note?: string): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [IDEMPOTENCY_TABLE.partitionKey]: key,
            [IDEMPOTENCY_TABLE.ttlAttribute]: Math.floor(Date.now() / 1000) + this.ttlSeconds,
            ...(note !== undefined ? { note } : {}),
          },
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": IDEMPOTENCY_TABLE.partitionKey },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Whether `key` was claimed (and has not expired), without claiming it: one consistent read. */
  async claimed(key: string): Promise<boolean> {
    return (await this.markOf(key)) !== undefined;
  }

  /** The claim of `key` with its note (none: claimed without one), or undefined: one consistent read. */
  async markOf(key: string): Promise<{ note?: string } | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [IDEMPOTENCY_TABLE.partitionKey]: key },
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    return typeof Item.note === "string" ? { note: Item.note } : {};
  }

  /** Gives a claim back, when what it guarded did not happen after all. */
  async release(key: string): Promise<void> {
    await this.doc.send(
      new DeleteCommand({ TableName: this.tableName, Key: { [IDEMPOTENCY_TABLE.partitionKey]: key } }),
    );
  }
}
