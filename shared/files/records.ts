import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  DATA_FILE_PREFIX,
  DATA_FILE_SUMMARY_COLUMN_BYTES,
  type DataFileSummary,
  OWNER_SORT_KEY,
} from "../stores/session-owners";
import { conditionalWrite } from "../stores/conditional-write";
import type { DataFormat } from "./sql-errors";

export type FileStatus = "pending" | "ready" | "rejected";
export type FileKind = "image" | "data";

export interface Column {
  name: string;
  type: string;
}

export interface FileRecord {
  file_id: string;
  session_id: string;
  user_id: string;
  name: string;
  /** the type the client claimed; once ready, the type read from the bytes */
  media_type: string;
  bytes: number;
  kind: FileKind;
  status: FileStatus;
  /** why a file was rejected */
  reason?: string;
  /** the object's key in the attachments bucket (under the user's prefix) */
  key: string;
  created_at: string;
  /** images */
  width?: number;
  height?: number;
  /** data files */
  table?: string;
  format?: DataFormat;
  /** set when the data file is not UTF-8: its bytes are read as this (shared/files/inspect.ts textOf) */
  encoding?: "windows-1252";
  columns?: Column[];
  row_count?: number;
}

const FILE_PREFIX = "f#";
/** A pending file's check claim (claimCheck): until when, and whose. Never part of a FileRecord; a settled record's write drops them. */
const CHECK_UNTIL = "checking_until";
const CHECK_BY = "checking_by";
/** A data file's table name, claimed in its session (sort key t#<name>, lower-cased) for one file. */
const TABLE_PREFIX = "t#";
const pointerKey = (fileId: string) => ({ pk: `file#${fileId}`, sk: "file" });

/**
 * File metadata in DynamoDB, in the session's own partition of the checkpoint table
 * (sort key f#<file_id>), beside the owner record: listing a session's files is one Query,
 * the session's owner check is already a read of that partition, and deleteThread sweeps
 * the records away with the session. Postgres would make the files depend on Supabase,
 * which a deployment may not have. A small pointer item (pk file#<id>) finds a file's
 * session for GET /api/files/{id}; it is checked against the session's record, so a
 * pointer left behind by a deleted session finds nothing.
 */
export class FileRecords {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  async create(record: FileRecord): Promise<void> {
    // The pointer first: a record without one could not be downloaded, a pointer without a record finds nothing.
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...pointerKey(record.file_id), session_id: record.session_id },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: record.session_id, sk: `${FILE_PREFIX}${record.file_id}`, ...record },
      }),
    );
  }

  async get(sessionId: string, fileId: string): Promise<FileRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: sessionId, sk: `${FILE_PREFIX}${fileId}` },
        ConsistentRead: true,
      }),
    );
    return out.Item ? strip(out.Item) : undefined;
  }

  /** A file by id alone (download route). */
  async find(fileId: string): Promise<FileRecord | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: pointerKey(fileId) }));
    const sessionId = out.Item?.session_id as string | undefined;
    return sessionId ? this.get(sessionId, fileId) : undefined;
  }

  async list(sessionId: string): Promise<FileRecord[]> {
    const records: FileRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :f)",
          ExpressionAttributeValues: { ":pk": sessionId, ":f": FILE_PREFIX },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) records.push(strip(item));
      start = out.LastEvaluatedKey;
    } while (start);
    return records.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /**
   * Settles a pending file once; false when it was already settled (a second completion,
   * or the bucket notification after the client's complete call).
   */
  async settle(record: FileRecord): Promise<boolean> {
    const settled = await conditionalWrite(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: record.session_id, sk: `${FILE_PREFIX}${record.file_id}`, ...record },
          ConditionExpression: "#s = :pending",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: { ":pending": "pending" },
        }),
      ),
    );
    if (!settled) return false;
    if (record.status === "ready" && record.kind === "data") {
      await this.noteDataFile(record);
      // A delete between the record's write and the summary's found no summary to remove: read
      // the record again after, and remove the summary if it is gone (whichever order the two
      // land in, one of them removes it).
      if (!(await this.get(record.session_id, record.file_id)))
        await this.forgetDataFile(record.session_id, record.file_id);
    }
    return true;
  }

  /**
   * Claims a pending file's check for `ms` (the complete call and the bucket's notification both
   * arrive; one data function invocation is enough): true when this caller (`token`) holds it now,
   * false while another's claim runs or once the file is settled or gone. A claim that ran out is
   * taken over: its holder died, or runs past any check's time limit.
   */
  async claimCheck(sessionId: string, fileId: string, token: string, ms: number): Promise<boolean> {
    const now = Date.now();
    return conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: `${FILE_PREFIX}${fileId}` },
          UpdateExpression: "SET #until = :until, #by = :token",
          ConditionExpression: "#s = :pending AND (attribute_not_exists(#until) OR #until < :now)",
          ExpressionAttributeNames: { "#s": "status", "#until": CHECK_UNTIL, "#by": CHECK_BY },
          ExpressionAttributeValues: { ":pending": "pending", ":until": now + ms, ":now": now, ":token": token },
        }),
      ),
    );
  }

  /** Gives a check's claim back (its check failed), so the next caller checks at once; a claim no longer `token`'s is left alone. */
  async releaseCheck(sessionId: string, fileId: string, token: string): Promise<void> {
    await conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: `${FILE_PREFIX}${fileId}` },
          UpdateExpression: "REMOVE #until, #by",
          ConditionExpression: "#by = :token",
          ExpressionAttributeNames: { "#until": CHECK_UNTIL, "#by": CHECK_BY },
          ExpressionAttributeValues: { ":token": token },
        }),
      ),
    );
  }

  /**
   * Claims a table name in the session for a file, case-insensitively as DuckDB compares names:
   * true when the name is this file's (claimed now, or before by the same file's other check).
   * Two files checked at the same moment cannot both be stored under one name.
   */
  async claimTableName(sessionId: string, fileId: string, name: string): Promise<boolean> {
    return conditionalWrite(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: sessionId, sk: `${TABLE_PREFIX}${name.toLowerCase()}`, file_id: fileId },
          ConditionExpression: "attribute_not_exists(sk) OR file_id = :f",
          ExpressionAttributeValues: { ":f": fileId },
        }),
      ),
    );
  }

  /** Gives a file's table name back to the session (the file deleted, or not stored under it). */
  async releaseTableName(sessionId: string, fileId: string, name: string): Promise<void> {
    await conditionalWrite(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: `${TABLE_PREFIX}${name.toLowerCase()}` },
          ConditionExpression: "file_id = :f",
          ExpressionAttributeValues: { ":f": fileId },
        }),
      ),
    );
  }

  /**
   * Lists a ready data file on its session's owner record (DataFileSummary), which every turn's
   * lease update returns: the prompt's lines come with it, with no read of the session's files per
   * turn. Nothing when the session is gone (its owner record with it).
   */
  private async noteDataFile(record: FileRecord): Promise<void> {
    await conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: record.session_id, sk: OWNER_SORT_KEY },
          UpdateExpression: "SET #f = :summary",
          ConditionExpression: "attribute_exists(user_id)",
          ExpressionAttributeNames: { "#f": `${DATA_FILE_PREFIX}${record.file_id}` },
          ExpressionAttributeValues: { ":summary": summaryOf(record) },
        }),
      ),
    );
  }

  /** Deletes a file's record and pointer; true when this call removed the record (false: already gone). */
  async delete(sessionId: string, fileId: string): Promise<boolean> {
    const out = await this.doc.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: sessionId, sk: `${FILE_PREFIX}${fileId}` },
        ReturnValues: "ALL_OLD",
      }),
    );
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: pointerKey(fileId) }));
    if (typeof out.Attributes?.table === "string") await this.releaseTableName(sessionId, fileId, out.Attributes.table);
    if (out.Attributes?.kind === "data") await this.forgetDataFile(sessionId, fileId);
    return out.Attributes !== undefined;
  }

  /** Removes a data file's summary from its session's owner record (nothing when the session is gone). */
  private async forgetDataFile(sessionId: string, fileId: string): Promise<void> {
    await conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: OWNER_SORT_KEY },
          UpdateExpression: "REMOVE #f",
          ConditionExpression: "attribute_exists(user_id)",
          ExpressionAttributeNames: { "#f": `${DATA_FILE_PREFIX}${fileId}` },
        }),
      ),
    );
  }

  /**
   * Takes `count` of the session's `max` file slots, or none: one conditional ADD on the
   * session's owner record, which also checks that the session is still `userId`'s. Counting the
   * records first and writing after let concurrent uploads past the limit (31 of 20); this
   * counter cannot. A session recorded before the counter existed starts it from its records.
   * "full" leaves the count as it was; "not_owner" when the session is gone or another user's.
   */
  async reserveSlots(
    sessionId: string,
    userId: string,
    count: number,
    max: number,
  ): Promise<"reserved" | "full" | "not_owner"> {
    const key = { pk: sessionId, sk: OWNER_SORT_KEY };
    for (let attempt = 0; ; attempt++) {
      const reserved = await conditionalWrite(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: "ADD #n :count",
            ConditionExpression: "user_id = :user AND #n <= :room",
            ExpressionAttributeNames: { "#n": FILE_COUNT },
            ExpressionAttributeValues: { ":count": count, ":user": userId, ":room": max - count },
          }),
        ),
      );
      if (reserved) return "reserved";
      const owner = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
      if (owner.Item?.user_id !== userId) return "not_owner";
      if (owner.Item[FILE_COUNT] !== undefined || attempt > 0) return "full";
      // Counted from the records once; a concurrent start of the count wins and this one retries on it.
      const existing = (await this.list(sessionId)).length;
      await conditionalWrite(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: "SET #n = :existing",
            ConditionExpression: "user_id = :user AND attribute_not_exists(#n)",
            ExpressionAttributeNames: { "#n": FILE_COUNT },
            ExpressionAttributeValues: { ":existing": existing, ":user": userId },
          }),
        ),
      );
    }
  }

  /** Gives slots back (a file deleted, or a creation that failed); nothing when the session is gone. */
  async releaseSlots(sessionId: string, count: number): Promise<void> {
    if (count <= 0) return;
    await conditionalWrite(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: OWNER_SORT_KEY },
          UpdateExpression: "ADD #n :minus",
          ConditionExpression: "#n >= :count",
          ExpressionAttributeNames: { "#n": FILE_COUNT },
          ExpressionAttributeValues: { ":minus": -count, ":count": count },
        }),
      ),
    );
  }
}

/** The session's file count, on its owner record (shared/stores/session-owners.ts), beside its lease. */
const FILE_COUNT = "file_count";

/** A ready data file as the prompt lists it: its columns up to DATA_FILE_SUMMARY_COLUMN_BYTES, their count beside. */
export function summaryOf(record: FileRecord): DataFileSummary {
  const all = record.columns ?? [];
  const columns: DataFileSummary["columns"] = [];
  let bytes = 0;
  for (const c of all) {
    bytes += Buffer.byteLength(JSON.stringify({ name: c.name, type: c.type })) + 1;
    if (bytes > DATA_FILE_SUMMARY_COLUMN_BYTES) break;
    columns.push({ name: c.name, type: c.type });
  }
  return {
    file_id: record.file_id,
    name: record.name,
    table: record.table!,
    row_count: record.row_count ?? 0,
    created_at: record.created_at,
    columns,
    column_count: all.length,
  };
}

function strip(item: Record<string, unknown>): FileRecord {
  const { pk: _pk, sk: _sk, [CHECK_UNTIL]: _until, [CHECK_BY]: _by, ...record } = item;
  return record as unknown as FileRecord;
}
