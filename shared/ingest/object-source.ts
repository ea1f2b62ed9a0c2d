import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, type S3Client } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { constants, createReadStream, type Stats } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { SkipDocument } from "../documents/skip";

export interface StoredObject {
  body: Uint8Array;
  size: number;
}

/** Where ingestion reads documents: S3 in AWS, the drop folder locally. */
export interface ObjectSource {
  /** The object's bytes; undefined when it no longer exists. Throws `TooLarge` past `maxBytes`. */
  get(bucket: string, key: string, maxBytes: number): Promise<StoredObject | undefined>;
  /** What the key holds now (its current version, in a versioned bucket): undefined when nothing. */
  head(bucket: string, key: string): Promise<ObjectHead | undefined>;
}

/** An object's size and ETag (an MD5 of its bytes, for an object not uploaded in parts), as S3's events carry them. */
export interface ObjectHead {
  size: number;
  etag?: string;
}

export class TooLarge extends Error {
  constructor(readonly size: number) {
    super(`object of ${size} bytes is over the limit`);
  }
}

export class S3ObjectSource implements ObjectSource {
  constructor(private readonly s3: S3Client) {}

  async get(bucket: string, key: string, maxBytes: number): Promise<StoredObject | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const size = out.ContentLength ?? 0;
      if (size > maxBytes) {
        out.Body?.transformToWebStream().cancel();
        throw new TooLarge(size);
      }
      return { body: await out.Body!.transformToByteArray(), size };
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }

  async head(bucket: string, key: string): Promise<ObjectHead | undefined> {
    try {
      const out = await this.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      // The header quotes the ETag; an event's eTag is bare.
      return { size: out.ContentLength ?? 0, etag: out.ETag?.replaceAll('"', "") };
    } catch (err) {
      // HeadObject has no body to name the error: a missing key (or a delete marker) is a bare 404.
      if (err instanceof NotFound || err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }
}

/** A folder entry that is no object: a FIFO, socket, directory, device, or one we may not read. */
export class NotAnObject extends SkipDocument {}

const KINDS: Array<[(s: Stats) => boolean, string]> = [
  [(s) => s.isDirectory(), "directory"],
  [(s) => s.isFIFO(), "FIFO"],
  [(s) => s.isSocket(), "socket"],
  [(s) => s.isCharacterDevice(), "character device"],
  [(s) => s.isBlockDevice(), "block device"],
];
export const entryKind = (s: Stats) => KINDS.find(([is]) => is(s))?.[1] ?? "special file";

/** Errors opening an entry that no retry will cure; anything else (EMFILE…) is thrown and retried. */
const UNREADABLE = new Set(["EACCES", "EPERM", "ELOOP", "ENXIO", "EISDIR", "ENAMETOOLONG", "EOPNOTSUPP"]);

/**
 * The local stack's bucket: a folder whose relative paths are the keys. Only regular files are
 * objects. The file is opened non-blocking and checked on the open descriptor, so a FIFO (whose
 * read would wait forever for a writer) or an entry swapped between a check and the read is
 * refused, not waited on.
 */
export class FolderObjectSource implements ObjectSource {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async head(_bucket: string, key: string): Promise<ObjectHead | undefined> {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) return undefined;
    const stats = await stat(path).catch(() => undefined);
    if (!stats?.isFile()) return undefined;
    // The drop folder's events carry the MD5 as the ETag (infra/local/drop-folder.ts), so the same bytes match.
    const md5 = createHash("md5");
    for await (const chunk of createReadStream(path)) md5.update(chunk as Buffer);
    return { size: stats.size, etag: md5.digest("hex") };
  }

  async get(_bucket: string, key: string, maxBytes: number): Promise<StoredObject | undefined> {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) return undefined; // a key cannot climb out of the bucket
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      if (UNREADABLE.has(code)) throw new NotAnObject(`the file cannot be read (${code})`);
      throw err;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new NotAnObject(`not a regular file (${entryKind(stats)})`);
      if (stats.size > maxBytes) throw new TooLarge(stats.size);
      return { body: new Uint8Array(await handle.readFile()), size: stats.size };
    } finally {
      await handle.close();
    }
  }
}
