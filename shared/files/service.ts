import { randomUUID } from "node:crypto";
import type { Backends } from "../backends";
import type { Config } from "../config";
import { AppError, badRequest, notFound } from "../errors";
import { ownedSession } from "../ownership";
import { SessionOwners } from "../stores/session-owners";
import { ACCEPTED_MEDIA_TYPES, claimedKind, inspectImage, type Inspection } from "./inspect";
import { noDataEngine, type DataEngine } from "./data-engine";
import { objectKey, parseObjectKey } from "./keys";
import { SqlBusy, SqlEngineUnavailable, SqlError, sqlLimitsOf } from "./sql-errors";
import { tableName, withTableNames } from "./table-names";
import { truncateCodePoints } from "../text";
import type { FileObjects } from "./objects";
import { FileRecords, type FileRecord } from "./records";

export const fileNotFound = () => notFound("file_not_found", "no such file");

/** A rejected file's reason is for people: its first words say it (an engine's message can be long). */
const MAX_REASON_CHARS = 500;
/** A file record's size as JSON, checked before it is written: well inside DynamoDB's 400 KB item. */
const MAX_RECORD_BYTES = 100 * 1024;

export type FilesConfig = Pick<
  Config,
  "FILES_MAX_BYTES" | "FILES_PER_SESSION" | "FILES_MAX_ROWS" | "FILES_URL_TTL_SECONDS"
> &
  Partial<Pick<Config, "SQL_TIMEOUT_MS" | "SQL_MEMORY_MB" | "SQL_CONCURRENCY">>;

/** What a client sees of a file: no bucket key, no owner. */
/**
 * How long a data file's check is claimed for: past the data function's 30 s time limit with room
 * for the invocation, so a claim runs out only when its holder is gone.
 */
const CHECK_CLAIM_MS = 45_000;
/** How long the complete call waits for another caller's check: its answer must beat API Gateway's 29 s. */
const COMPLETE_WAIT_MS = 20_000;
/** How long the bucket notification waits (its function has 60 s); past it the event is retried, by then over a claim that ran out. */
const NOTIFICATION_WAIT_MS = 25_000;
const CHECK_POLL_MS = 250;
const CHECK_RETRY_SECONDS = 5;

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
    private readonly deps: {
      records: FileRecords;
      objects: FileObjects;
      owners: SessionOwners;
      config: FilesConfig;
      /** where data files are checked: the data function (or its local stand-in) */
      engine?: DataEngine;
    },
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
    const [record] = await this.withSlots(userId, sessionId, 1, async () => {
      const made = this.newRecord(userId, sessionId, {
        name: input.name,
        media_type: input.media_type,
        bytes: input.bytes,
        kind: claimedKind(input.media_type)!,
        status: "pending",
      });
      await records.create(made);
      return [made];
    });
    const ttl = config.FILES_URL_TTL_SECONDS;
    const grant = await objects.uploadUrl(record!.key, record!.media_type, record!.bytes, ttl);
    return {
      file_id: record!.file_id,
      upload_url: grant.url,
      headers: grant.headers,
      expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
    };
  }

  /**
   * The images a chat message carries inline (already checked by their bytes): stored as ready
   * files of the session, so the checkpoint refers to them as to any upload. They count against
   * FILES_PER_SESSION as uploads do: all of them fit, or none is stored.
   */
  async storeImages(
    userId: string,
    sessionId: string,
    images: { name: string; media_type: string; bytes: Uint8Array; width: number; height: number }[],
  ): Promise<FileRecord[]> {
    if (images.length === 0) return [];
    await this.ownSession(userId, sessionId);
    return this.withSlots(userId, sessionId, images.length, async (made) => {
      const ready: FileRecord[] = [];
      for (const image of images) {
        const record = this.newRecord(userId, sessionId, {
          name: image.name,
          media_type: image.media_type,
          bytes: image.bytes.byteLength,
          kind: "image",
          status: "pending",
        });
        // Pending first, then the object, then ready: a ready record never names a missing object,
        // and the bucket's notification for this write (which may come before the write returns)
        // finds a pending file to settle, never bytes of no file to discard.
        await this.deps.records.create(record);
        made.push(record);
        await this.deps.objects.write(record.key, image.bytes, image.media_type);
        const settled: FileRecord = { ...record, status: "ready", width: image.width, height: image.height };
        if (!(await this.deps.records.settle(settled))) {
          const now = await this.deps.records.get(sessionId, record.file_id);
          if (now?.status !== "ready") throw new Error(`inline image ${record.file_id} was not stored`);
        }
        ready.push(settled);
      }
      return ready;
    });
  }

  /**
   * Takes `count` of the session's file slots, then makes the files; if making them fails, what
   * was made is deleted and every slot given back. FILES_PER_SESSION is counted on the session's
   * owner record (FileRecords.reserveSlots), so concurrent uploads cannot pass it.
   */
  private async withSlots(
    userId: string,
    sessionId: string,
    count: number,
    make: (made: FileRecord[]) => Promise<FileRecord[]>,
  ): Promise<FileRecord[]> {
    const { config, records } = this.deps;
    const reserved = await records.reserveSlots(sessionId, userId, count, config.FILES_PER_SESSION);
    if (reserved === "not_owner") throw notFound("session_not_found", "no such session");
    if (reserved === "full")
      throw new AppError(
        409,
        "too_many_files",
        `a session may hold at most ${config.FILES_PER_SESSION} files (FILES_PER_SESSION)`,
      );
    const made: FileRecord[] = [];
    try {
      return await make(made);
    } catch (err) {
      await this.deleteFiles(sessionId, made).catch(() => undefined); // each gives its slot back
      await records.releaseSlots(sessionId, count - made.length).catch(() => undefined);
      throw err;
    }
  }

  private newRecord(
    userId: string,
    sessionId: string,
    fields: Pick<FileRecord, "name" | "media_type" | "bytes" | "kind" | "status" | "width" | "height">,
  ): FileRecord {
    const fileId = randomUUID();
    return {
      file_id: fileId,
      session_id: sessionId,
      user_id: userId,
      ...fields,
      key: objectKey(userId, sessionId, fileId),
      created_at: new Date().toISOString(),
    };
  }

  /** POST .../complete: the caller's own file, checked now. */
  async complete(userId: string, sessionId: string, fileId: string) {
    const record = await this.ownFile(userId, sessionId, fileId);
    return publicFile(await this.settle(record, COMPLETE_WAIT_MS));
  }

  /**
   * Checks the uploaded object and settles the file, once. Idempotent: a settled file is returned
   * as it is, so the bucket notification and the client's complete call can both arrive. The
   * bytes checked stay the file's: the bucket writes each key once (If-None-Match), and a data
   * file that is not UTF-8 is converted when read, never rewritten.
   *
   * A data file is checked by one caller at a time (its check is a data function invocation): the
   * first to claim it checks, the others wait up to `waitMs` for the file to settle and answer
   * what it settled as. A check that fails gives its claim back; one whose process died leaves a
   * claim that runs out after CHECK_CLAIM_MS, and the next caller checks.
   */
  async settle(record: FileRecord, waitMs = NOTIFICATION_WAIT_MS): Promise<FileRecord> {
    if (record.status !== "pending") return record;
    if (record.kind !== "data") return this.check(record);
    const token = randomUUID();
    const { records } = this.deps;
    const started = Date.now();
    while (!(await records.claimCheck(record.session_id, record.file_id, token, CHECK_CLAIM_MS))) {
      const now = await records.get(record.session_id, record.file_id);
      if (!now) {
        await this.deps.objects.delete([record.key]);
        throw fileNotFound();
      }
      if (now.status !== "pending") return now;
      if (Date.now() - started >= waitMs)
        throw new AppError(503, "file_checking", "another request is checking this file; retry shortly", {
          headers: { "retry-after": String(CHECK_RETRY_SECONDS) },
        });
      await new Promise((r) => setTimeout(r, CHECK_POLL_MS));
    }
    // A settled record's write drops the claim; a failed check gives it back.
    return this.check(record).catch(async (err: unknown) => {
      await records.releaseCheck(record.session_id, record.file_id, token).catch(() => undefined);
      throw err;
    });
  }

  private async check(record: FileRecord): Promise<FileRecord> {
    const bytes = await this.deps.objects.read(record.key);
    if (!bytes) {
      // The notification may have settled it meanwhile, deleting a rejected upload's object.
      const now = await this.deps.records.get(record.session_id, record.file_id);
      if (now && now.status !== "pending") return now;
      throw new AppError(409, "upload_missing", "nothing has been uploaded for this file yet");
    }
    let settled: FileRecord;
    let claimed: string | undefined; // the table name this check claimed, given back unless stored
    if (bytes.byteLength !== record.bytes) {
      settled = {
        ...record,
        status: "rejected",
        reason: `uploaded ${bytes.byteLength} bytes, announced ${record.bytes}`,
      };
    } else {
      const found = await this.inspect(bytes, record);
      if (!found.ok)
        settled = { ...record, status: "rejected", reason: truncateCodePoints(found.reason, MAX_REASON_CHARS) };
      else if (found.kind === "image")
        settled = {
          ...record,
          status: "ready",
          media_type: found.media_type,
          width: found.width,
          height: found.height,
        };
      else
        settled = {
          ...record,
          status: "ready",
          table: (claimed = await this.uniqueTableName(record)),
          format: found.format,
          columns: found.columns,
          row_count: found.row_count,
          ...(found.encoding ? { encoding: found.encoding } : {}),
        };
    }
    // Bounded before the write: a record DynamoDB cannot store would fail the complete call and
    // leave the file pending for good.
    const size = Buffer.byteLength(JSON.stringify(settled));
    if (size > MAX_RECORD_BYTES)
      settled = {
        ...record,
        status: "rejected",
        reason: `its description takes ${Math.ceil(size / 1024)} KB; at most ${MAX_RECORD_BYTES / 1024} KB can be kept`,
      };
    // A claimed table name stays only with a ready record stored under it.
    const giveBack = async (kept?: string) => {
      if (claimed && claimed !== kept)
        await this.deps.records.releaseTableName(record.session_id, record.file_id, claimed);
    };
    await giveBack(settled.status === "ready" ? settled.table : undefined);
    // The record first, then a rejected upload's bytes: a complete call between the two would find
    // no bytes beside a pending record and answer upload_missing for bytes that had landed.
    const written = await this.deps.records.settle(settled).catch(async (err: unknown) => {
      await giveBack(); // not stored: the name is free again (a retry claims it anew)
      throw err;
    });
    if (written) {
      // Settled: a failed delete must not undo the answer. Bytes it leaves go with the session's
      // deletion or the bucket's expiry (attachmentsExpireDays); no record names them meanwhile.
      if (settled.status === "rejected") await this.deps.objects.delete([record.key]).catch(() => undefined);
      return settled;
    }
    // Settled by someone else meanwhile, or deleted with its session: what landed then is no file's.
    const now = await this.deps.records.get(record.session_id, record.file_id);
    await giveBack(now?.status === "ready" ? now.table : undefined);
    if (!now) {
      await this.deps.objects.delete([record.key]);
      throw fileNotFound();
    }
    if (now.status === "rejected") await this.deps.objects.delete([record.key]);
    return now;
  }

  /** An image here, a data file by the engine (which reads the object itself); busy is a 503 to retry. */
  private async inspect(bytes: Uint8Array, record: FileRecord): Promise<Inspection> {
    const kind = claimedKind(record.media_type);
    if (kind === "image") return inspectImage(bytes);
    if (kind !== "data") return { ok: false, reason: `unsupported media type ${record.media_type}` };
    const { config, engine = noDataEngine } = this.deps;
    try {
      return await engine.inspect({
        key: record.key,
        name: record.name,
        media_type: record.media_type,
        maxRows: config.FILES_MAX_ROWS,
        limits: sqlLimitsOf(config),
      });
    } catch (err) {
      if (err instanceof SqlBusy) throw new AppError(503, "files_busy", err.message);
      if (err instanceof SqlEngineUnavailable) return { ok: false, reason: err.message };
      // The engine's failure (it ran out of time or memory on this file): the file's, told as such.
      if (err instanceof SqlError) return { ok: false, reason: `not a readable data file: ${err.message}` };
      throw err;
    }
  }

  /**
   * The bucket says an object landed (its notification: at least once, in any order). A pending
   * file is settled; bytes that landed for a file that is gone (deleted, or its session deleted)
   * or was rejected are deleted, since no record will ever name them; a ready file's object is the
   * one checked (the bucket writes each key once) and stays.
   */
  async landed(key: string): Promise<"settled" | "kept" | "discarded" | "ignored"> {
    const parsed = parseObjectKey(key);
    if (!parsed) return "ignored";
    const file = await this.deps.records.get(parsed.sessionId, parsed.fileId);
    if (!file || file.key !== key || file.status === "rejected") {
      await this.deps.objects.delete([key]);
      return "discarded";
    }
    if (file.status === "ready") return "kept";
    try {
      return (await this.settle(file)).status === "rejected" ? "discarded" : "settled";
    } catch (err) {
      if (err instanceof AppError && err.code === "file_not_found") return "discarded";
      throw err;
    }
  }

  async list(userId: string, sessionId: string) {
    await this.ownSession(userId, sessionId);
    return withTableNames(await this.deps.records.list(sessionId)).map(publicFile);
  }

  /**
   * The table name a data file being checked gets, claimed in the session (FileRecords'
   * claimTableName): its file's, unless another data file has it, then _2, _3... Named by reading
   * the other files alone, two files checked at the same moment were both stored as "sales".
   */
  private async uniqueTableName(record: FileRecord): Promise<string> {
    const others = (await this.deps.records.list(record.session_id)).filter(
      (f) => f.file_id !== record.file_id && f.kind === "data" && f.status === "ready",
    );
    const taken = new Set(withTableNames(others).map((f) => f.table!.toLowerCase()));
    const base = tableName(record.name);
    // Each name is tried once: the session holds at most FILES_PER_SESSION files, so one is free.
    for (let n = 1; n <= this.deps.config.FILES_PER_SESSION + 1; n++) {
      const name = n === 1 ? base : `${base}_${n}`;
      if (!taken.has(name) && (await this.deps.records.claimTableName(record.session_id, record.file_id, name)))
        return name;
    }
    throw new AppError(409, "too_many_files", "no table name is free in this session");
  }

  async remove(userId: string, sessionId: string, fileId: string) {
    const record = await this.ownFile(userId, sessionId, fileId);
    await this.deleteFiles(sessionId, [record]);
  }

  async download(userId: string, fileId: string) {
    const record = await this.deps.records.find(fileId);
    if (!record || record.user_id !== userId) throw fileNotFound();
    await ownedSession(this.deps.owners, userId, record.session_id, fileNotFound);
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
    await this.deleteFiles(sessionId, await this.deps.records.list(sessionId));
  }

  /**
   * Objects, then records, then the objects again. The objects first, so a failure half-way leaves
   * records a retry finds; again after, for an upload that landed in between (its signed URL still
   * valid). One landing after the records are gone finds no record and is discarded (landed()).
   */
  private async deleteFiles(sessionId: string, files: FileRecord[]) {
    if (files.length === 0) return;
    const keys = files.map((f) => f.key);
    await this.deps.objects.delete(keys);
    let removed = 0;
    for (const f of files) if (await this.deps.records.delete(sessionId, f.file_id)) removed++;
    await this.deps.objects.delete(keys);
    // Only the records this call removed give their slot back: two deletes of one file free one.
    await this.deps.records.releaseSlots(sessionId, removed);
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
  const { config, dynamo, files, dataEngine } = backends;
  if (!files) return undefined;
  return new FileService({
    records: new FileRecords(dynamo, config.CHECKPOINT_TABLE),
    objects: files,
    ...(dataEngine ? { engine: dataEngine } : {}),
    owners: new SessionOwners(dynamo, config.CHECKPOINT_TABLE, config.CHECKPOINT_TTL_DAYS),
    config,
  });
}
