import { GetObjectCommand, NoSuchKey, type S3Client } from "@aws-sdk/client-s3";
import { readFile, stat } from "node:fs/promises";
import { resolve, sep } from "node:path";

export interface StoredObject {
  body: Uint8Array;
  size: number;
}

/** Where ingestion reads documents: S3 in AWS, the drop folder locally. */
export interface ObjectSource {
  /** The object's bytes; undefined when it no longer exists. Throws `TooLarge` past `maxBytes`. */
  get(bucket: string, key: string, maxBytes: number): Promise<StoredObject | undefined>;
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
}

/** The local stack's bucket: a folder whose relative paths are the keys. */
export class FolderObjectSource implements ObjectSource {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async get(_bucket: string, key: string, maxBytes: number): Promise<StoredObject | undefined> {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) return undefined; // a key cannot climb out of the bucket
    try {
      const { size } = await stat(path);
      if (size > maxBytes) throw new TooLarge(size);
      return { body: new Uint8Array(await readFile(path)), size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }
}
