import { queryItems } from "./query-items";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

/** An assistant: a graph with its configuration, as one version of it. */
export interface AssistantRecord {
  assistantId: string;
  graphId: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  createdAt: string;
  updatedAt: string;
}

const VERSION = "#v#";
/** Versions sort as text: zero-padded. */
const versionKey = (assistantId: string, version: number) =>
  `${assistantId}${VERSION}${String(version).padStart(8, "0")}`;

/**
 * A user's assistants and every version of each, in a per-user partition of the checkpoint table
 * (`assistants#<user>`): the current one under the assistant's id (with the highest version made so
 * far), each version under `<id>#v#<version>`. One Query lists a user's assistants, and nobody
 * else's can be in it; the current one is written on the condition that it is what was read, so two
 * updates never make the same version.
 */
export class AgentAssistants {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /**
   * The current version, or undefined when the user has no such assistant, with the highest version
   * made so far (set_latest can make an older one current): one read, so a write conditioned on that
   * version is conditioned on the record it read.
   */
  async get(userId: string, assistantId: string): Promise<(AssistantRecord & { maxVersion: number }) | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: partition(userId), sk: assistantId },
        ConsistentRead: true,
      }),
    );
    return out.Item
      ? { ...fromItem(out.Item), maxVersion: (out.Item.max_version as number | undefined) ?? 0 }
      : undefined;
  }

  /**
   * Writes `record` as the current version. `expected` is the current version's max_version as read
   * (0: the assistant must not exist yet), so of two writers only one succeeds; the version's own
   * item follows (a crash in between leaves the version out of the list, the current one right:
   * `versions` shows the current one anyway). False when another write came first.
   */
  async write(
    userId: string,
    record: AssistantRecord,
    expected: number,
    { asNewVersion, maxVersion }: { asNewVersion: boolean; maxVersion: number },
  ): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: partition(userId), sk: record.assistantId, ...assistantItem(record), max_version: maxVersion },
          ConditionExpression: expected === 0 ? "attribute_not_exists(pk)" : "max_version = :m",
          ...(expected === 0 ? {} : { ExpressionAttributeValues: { ":m": expected } }),
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
    if (asNewVersion)
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: partition(userId), sk: versionKey(record.assistantId, record.version), ...assistantItem(record) },
        }),
      );
    return true;
  }

  /** Every version of the assistant, newest first. */
  async versions(userId: string, assistantId: string): Promise<AssistantRecord[]> {
    const found = (await this.query(userId, assistantId)).filter(
      (item) => item.sk === assistantId || String(item.sk).startsWith(`${assistantId}${VERSION}`),
    );
    const byVersion = new Map(found.filter((i) => i.sk !== assistantId).map((i) => [i.version as number, fromItem(i)]));
    // The current one stands in for its version when that version's own item is missing.
    const current = found.find((i) => i.sk === assistantId);
    if (current && !byVersion.has(current.version as number))
      byVersion.set(current.version as number, fromItem(current));
    return [...byVersion.values()].sort((a, b) => b.version - a.version);
  }

  /** The current version of every assistant of the user's. */
  async list(userId: string): Promise<AssistantRecord[]> {
    return (await this.query(userId)).filter((item) => !String(item.sk).includes(VERSION)).map(fromItem);
  }

  /** The assistant and all its versions; without an id, every assistant of the user's (erasure). */
  async remove(userId: string, assistantId?: string): Promise<number> {
    const keys = (await this.query(userId, assistantId))
      .filter(
        (item) =>
          assistantId === undefined ||
          item.sk === assistantId ||
          String(item.sk).startsWith(`${assistantId}${VERSION}`),
      )
      .map((item) => ({ pk: item.pk, sk: item.sk }));
    for (let i = 0; i < keys.length; i += 25) {
      let requests: Record<string, unknown>[] | undefined = keys
        .slice(i, i + 25)
        .map((key) => ({ DeleteRequest: { Key: key } }));
      for (let attempt = 0; requests && requests.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** Math.min(attempt, 5)));
        const out = await this.doc.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests as never } }),
        );
        requests = out.UnprocessedItems?.[this.tableName] as Record<string, unknown>[] | undefined;
      }
    }
    return keys.filter((k) => !String(k.sk).includes(VERSION)).length;
  }

  private async query(userId: string, prefix?: string): Promise<Record<string, unknown>[]> {
    return queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: prefix ? "pk = :pk AND begins_with(sk, :p)" : "pk = :pk",
      ExpressionAttributeValues: { ":pk": partition(userId), ...(prefix ? { ":p": prefix } : {}) },
      ConsistentRead: true,
    });
  }
}

// Session ids are UUIDs, so this prefix can never be a session's partition.
const partition = (userId: string) => `assistants#${userId}`;

/** An assistant as stored, snake_case: the Agent Server API's JSON has the same fields (graph/agent-server/assistants.ts). */
export const assistantItem = (r: AssistantRecord) => ({
  assistant_id: r.assistantId,
  graph_id: r.graphId,
  name: r.name,
  description: r.description,
  config: r.config,
  context: r.context,
  metadata: r.metadata,
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

const fromItem = (item: Record<string, unknown>): AssistantRecord => ({
  assistantId: item.assistant_id as string,
  graphId: item.graph_id as string,
  name: item.name as string,
  description: (item.description as string | null | undefined) ?? null,
  config: (item.config as Record<string, unknown> | undefined) ?? {},
  context: (item.context as Record<string, unknown> | undefined) ?? {},
  metadata: (item.metadata as Record<string, unknown> | undefined) ?? {},
  version: item.version as number,
  createdAt: item.created_at as string,
  updatedAt: item.updated_at as string,
});
