import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { CHECKPOINT_TABLE } from "./checkpoint-table";

/** Sort key of the owner record in a thread's partition; the checkpoint saver ignores it. */
export const OWNER_SORT_KEY = "session";

/**
 * Who owns each chat session, kept in the thread's own partition of the checkpoint table:
 * one consistent GetItem per turn, a conditional put when a session starts, and it goes
 * with the thread on deleteThread. It does not depend on Supabase, so sessions stay
 * private even in a deployment without it.
 */
export class SessionOwners {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly ttlDays?: number,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /** Records a new session for `userId`; false when the id is already taken. */
  async claim(sessionId: string, userId: string): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: sessionId, sk: OWNER_SORT_KEY, user_id: userId, ...this.expiry() },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** The owner, or undefined for a session that does not exist. Keeps an active session from expiring. */
  async owner(sessionId: string): Promise<string | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: sessionId, sk: OWNER_SORT_KEY }, ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const expiresAt = out.Item[CHECKPOINT_TABLE.ttlAttribute] as number | undefined;
    if (this.ttlDays !== undefined && expiresAt !== undefined && expiresAt - now() < (this.ttlDays * 86_400) / 2) {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: OWNER_SORT_KEY },
          UpdateExpression: "SET #e = :e",
          ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute },
          ExpressionAttributeValues: { ":e": this.expiry()[CHECKPOINT_TABLE.ttlAttribute] },
        }),
      );
    }
    return out.Item.user_id as string;
  }

  private expiry(): Record<string, number> {
    return this.ttlDays === undefined
      ? {}
      : { [CHECKPOINT_TABLE.ttlAttribute]: now() + Math.round(this.ttlDays * 86_400) };
  }
}

const now = () => Math.floor(Date.now() / 1000);
