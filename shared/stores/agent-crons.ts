import { queryItems, scanItems } from "./query-items";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

export interface CronRecord {
  cronId: string;
  userId: string;
  threadId: string;
  assistantId: string;
  schedule: string;
  /** the run request each firing makes (RunCreate's fields) */
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  endTime?: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The user's crons, in a partition of their own: listing them is one Query, and nobody else's is in it. */
const partition = (userId: string) => `crons#${userId}`;

/**
 * The Agent Server API's crons, in the checkpoint table. A cron is its schedule and the run it
 * makes; the schedule itself is EventBridge Scheduler's in AWS (a local timer locally), which sends
 * the run worker `{cron_id, user_id}` at each firing (graph/agent-server/crons.ts).
 */
export class AgentCrons {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /**
   * Writes a cron, or answers false when its condition fails: `ifNew`, only when no cron has its
   * id (a create); `ifUpdatedAt`, only when the cron is still there as read (a patch).
   */
  async put(
    cron: CronRecord,
    { ifNew = false, ifUpdatedAt }: { ifNew?: boolean; ifUpdatedAt?: string } = {},
  ): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: partition(cron.userId),
            sk: cron.cronId,
            cron_id: cron.cronId,
            user_id: cron.userId,
            thread_id: cron.threadId,
            assistant_id: cron.assistantId,
            schedule: cron.schedule,
            payload: JSON.stringify(cron.payload),
            metadata: cron.metadata,
            enabled: cron.enabled,
            created_at: cron.createdAt,
            updated_at: cron.updatedAt,
            ...(cron.endTime ? { end_time: cron.endTime } : {}),
          },
          ...(ifNew ? { ConditionExpression: "attribute_not_exists(pk)" } : {}),
          ...(ifUpdatedAt !== undefined
            ? { ConditionExpression: "updated_at = :seen", ExpressionAttributeValues: { ":seen": ifUpdatedAt } }
            : {}),
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async get(userId: string, cronId: string): Promise<CronRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: partition(userId), sk: cronId }, ConsistentRead: true }),
    );
    return out.Item ? cronOf(out.Item) : undefined;
  }

  /** Every cron of the user's. */
  async list(userId: string): Promise<CronRecord[]> {
    const items = await queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": partition(userId) },
    });
    return items.map(cronOf);
  }

  /**
   * Every user's crons: a Scan of the whole table, for the local stack's restart only (its timers
   * live in the process; EventBridge Scheduler keeps them in AWS). Never on a request's path.
   */
  async everyUsers(): Promise<CronRecord[]> {
    const items = await scanItems(this.doc, {
      TableName: this.tableName,
      FilterExpression: "begins_with(pk, :p)",
      ExpressionAttributeValues: { ":p": partition("") },
    });
    return items.map(cronOf);
  }

  async remove(userId: string, cronId: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: partition(userId), sk: cronId } }));
  }
}

const cronOf = (item: Record<string, unknown>): CronRecord => ({
  cronId: item.cron_id as string,
  userId: item.user_id as string,
  threadId: item.thread_id as string,
  assistantId: item.assistant_id as string,
  schedule: item.schedule as string,
  payload: JSON.parse(item.payload as string) as Record<string, unknown>,
  metadata: (item.metadata as Record<string, unknown> | undefined) ?? {},
  enabled: item.enabled !== false,
  createdAt: item.created_at as string,
  updatedAt: item.updated_at as string,
  ...(typeof item.end_time === "string" ? { endTime: item.end_time } : {}),
});
