import { randomUUID } from "node:crypto";
import type { Backends } from "../backends";
import type { Config } from "../config";
import { AppError, badRequest, notFound } from "../errors";
import { ownedSession } from "../ownership";
import { SessionOwners } from "../stores/session-owners";
import { ACCEPTED_MEDIA_TYPES, claimedKind, inspectFile } from "./inspect";
import { objectKey } from "./keys";
import type { FileObjects } from "./objects";
import { FileRecords, type FileRecord } from "./records";

export const fileNotFound = () => notFound("file_not_found", "no such file");

export type FilesConfig = Pick<
  Config,
  "FILES_MAX_BYTES" | "FILES_PER_SESSION" | "FILES_MAX_ROWS" | "FILES_URL_TTL_SECONDS"
>;

/** What a client sees of a file: no bucket key, no owner. */
export function publicFile(record: FileRecord) {
  const { key: _key, user_id: _user, ...rest } = record;
  return rest;
}

/**
 * A session's files: create (answers a presigned upload URL), complete (checks the uploaded
 * bytes and settles the file ready or rejected, once), list, delete, download. The owner
 * check is the session's: every other caller gets 404, as for a file that does not exist.
 */
export class FileService {
  constructor(
    private readonly deps: { records: FileRecords; objects: FileObjects; owners: SessionOwners; config: FilesConfig },
  ) {}

  async create(userId: string, sessionId: string, input: { name: string; media_type: string; bytes: number }) {
    await this.ownSession(userId, sessionId);
    const { config, records, objects } = this.deps;
    if (!ACCEPTED_MEDIA_TYPES.includes(input.media_type))
      throw badRequest("unsupported_media_type", `media_type must be one of ${ACCEPTED_MEDIA_TYPES.join(", ")}`);
    if (input.bytes > config.FILES_MAX_BYTES)
      throw new AppError(
        413,
        "file_too_large",
        `a file may be at most ${config.FILES_MAX_BYTES} bytes (FILES_MAX_BYTES)`,
      );
    const existing = await records.list(sessionId);
    if (existing.length >= config.FILES_PER_SESSION)
      throw new AppError(
        409,
        "too_many_files",
        `a session may hold at most ${config.FILES_PER_SESSION} files (FILES_PER_SESSION)`,
      );
    const fileId = randomUUID();
    const record: FileRecord = {
      file_id: fileId,
      session_id: sessionId,
      user_id: userId,
      name: input.name,
      media_type: input.media_type,
      bytes: input.bytes,
      kind: claimedKind(input.media_type)!,
      status: "pending",
      key: objectKey(userId, sessionId, fileId),
      created_at: new Date().toISOString(),
    };
    await records.create(record);
    const ttl = config.FILES_URL_TTL_SECONDS;
    return {
      file_id: fileId,
      upload_url: await objects.uploadUrl(record.key, record.media_type, record.bytes, ttl),
      expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
    };
  }

  /**
   * An image sent inline with a chat message (already checked by its bytes): stored as a ready
   * file of the session, so the checkpoint can refer to it as to any upload.
   */
  async storeImage(
    userId: string,
    sessionId: string,
    image: { name: string; media_type: string; bytes: Uint8Array; width: number; height: number },
  ): Promise<FileRecord> {
    await this.ownSession(userId, sessionId);
    const fileId = randomUUID();
    const record: FileRecord = {
      file_id: fileId,
      session_id: sessionId,
      user_id: userId,
      name: image.name,
      media_type: image.media_type,
      bytes: image.bytes.byteLength,
      kind: "image",
      status: "ready",
      key: objectKey(userId, sessionId, fileId),
      created_at: new Date().toISOString(),
      width: image.width,
      height: image.height,
    };
    // The object before its record: a record never names a missing object.
    await this.deps.objects.write(record.key, image.bytes, image.media_type);
    await this.deps.records.create(record);
    return record;
  }

  /** POST .../complete: the caller's own file, checked now. */
  async complete(userId: string, sessionId: string, fileId: string) {
    const record = await this.ownFile(userId, sessionId, fileId);
    return publicFile(await this.settle(record));
  }

  /**
   * Checks the uploaded object and settles the file. Idempotent: a settled file is returned
   * as it is, so the bucket notification and the client's complete call can both arrive.
   */
  async settle(record: FileRecord): Promise<FileRecord> {
    if (record.status !== "pending") return record;
    const bytes = await this.deps.objects.read(record.key);
    if (!bytes) {
      // The notification may have settled it meanwhile, deleting a rejected upload's object.
      const now = await this.deps.records.get(record.session_id, record.file_id);
      if (now && now.status !== "pending") return now;
      throw new AppError(409, "upload_missing", "nothing has been uploaded for this file yet");
    }
    let settled: FileRecord;
    if (bytes.byteLength !== record.bytes) {
      settled = {
        ...record,
        status: "rejected",
        reason: `uploaded ${bytes.byteLength} bytes, announced ${record.bytes}`,
      };
    } else {
      const found = await inspectFile(bytes, record, this.deps.config.FILES_MAX_ROWS);
      if (!found.ok) settled = { ...record, status: "rejected", reason: found.reason };
      else if (found.kind === "image")
        settled = {
          ...record,
          status: "ready",
          media_type: found.media_type,
          width: found.width,
          height: found.height,
        };
      else {
        if (found.converted) await this.deps.objects.write(record.key, found.converted, record.media_type);
        settled = {
          ...record,
          status: "ready",
          bytes: found.converted?.byteLength ?? record.bytes,
          table: found.table,
          format: found.format,
          columns: found.columns,
          row_count: found.row_count,
        };
      }
    }
    if (settled.status === "rejected") await this.deps.objects.delete([record.key]);
    if (await this.deps.records.settle(settled)) return settled;
    return (await this.deps.records.get(record.session_id, record.file_id)) ?? settled;
  }

  async list(userId: string, sessionId: string) {
    await this.ownSession(userId, sessionId);
    return (await this.deps.records.list(sessionId)).map(publicFile);
  }

  async remove(userId: string, sessionId: string, fileId: string) {
    const record = await this.ownFile(userId, sessionId, fileId);
    await this.deps.objects.delete([record.key]);
    await this.deps.records.delete(sessionId, fileId);
  }

  async download(userId: string, fileId: string) {
    const record = await this.deps.records.find(fileId);
    if (!record || record.user_id !== userId || (await this.deps.owners.owner(record.session_id)) !== userId)
      throw fileNotFound();
    if (record.status !== "ready") throw new AppError(409, "file_not_ready", `the file is ${record.status}`);
    const ttl = this.deps.config.FILES_URL_TTL_SECONDS;
    return {
      ...publicFile(record),
      download_url: await this.deps.objects.downloadUrl(record.key, record.name, ttl),
      expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
    };
  }

  /** Called when a session is deleted, before its partition (and so its file records) goes. */
  async deleteSessionFiles(sessionId: string) {
    const records = await this.deps.records.list(sessionId);
    if (records.length > 0) await this.deps.objects.delete(records.map((r) => r.key));
    for (const r of records) await this.deps.records.delete(sessionId, r.file_id);
  }

  private async ownSession(userId: string, sessionId: string) {
    await ownedSession(this.deps.owners, userId, sessionId);
  }

  private async ownFile(userId: string, sessionId: string, fileId: string) {
    await this.ownSession(userId, sessionId);
    const record = await this.deps.records.get(sessionId, fileId);
    if (!record || record.user_id !== userId) throw fileNotFound();
    return record;
  }
}

/** The file service over the backends' bucket (or local folder); undefined when none is configured. */
export function fileService(backends: Backends): FileService | undefined {
  const { config, dynamo, files } = backends;
  if (!files) return undefined;
  return new FileService({
    records: new FileRecords(dynamo, config.CHECKPOINT_TABLE),
    objects: files,
    owners: new SessionOwners(dynamo, config.CHECKPOINT_TABLE, config.CHECKPOINT_TTL_DAYS),
    config,
  });
}
