import { AppError } from "../errors";
import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

/** A presigned upload: the URL and the headers the PUT must carry (they are signed into it). */
export interface UploadGrant {
  url: string;
  headers: Record<string, string>;
}

/**
 * Where a session's files live. In AWS: the attachments bucket, with presigned URLs (Lambda's
 * 6 MB payload limit rules out uploads through the API). Locally: a folder under DATA_DIR,
 * with upload and download URLs served by the local server (infra/local/uploads.ts).
 */
export interface FileObjects {
  /** a URL the client PUTs exactly `bytes` bytes of `mediaType` to, with the headers it must send */
  uploadUrl(key: string, mediaType: string, bytes: number, expiresInSeconds: number): Promise<UploadGrant>;
  downloadUrl(key: string, fileName: string, expiresInSeconds: number): Promise<string>;
  /** the object's bytes, or undefined when nothing was uploaded */
  read(key: string): Promise<Uint8Array | undefined>;
  /** writes an object the server made itself (an image sent inline) */
  write(key: string, body: Uint8Array, mediaType: string): Promise<void>;
  delete(keys: string[]): Promise<void>;
  /** removes every object whose key starts with `prefix` (a user's folder, on erasure) */
  deleteUnder(prefix: string): Promise<void>;
}

/**
 * The S3 actions each method needs of its caller's role (a presigned URL acts with its signer's),
 * beside the implementation that makes the calls: the local stack holds each function to its
 * grants with it (infra/local/granted-backends.ts). deleteUnder lists the prefix, then deletes.
 */
export const S3_ACTIONS: Record<keyof FileObjects, readonly string[]> = {
  uploadUrl: ["s3:PutObject"],
  downloadUrl: ["s3:GetObject"],
  // (and listing, for a key that is not there to read as missing: S3 answers 403 without it)
  read: ["s3:GetObject"],
  write: ["s3:PutObject"],
  delete: ["s3:DeleteObject"],
  deleteUnder: ["s3:ListBucket", "s3:DeleteObject"],
};

export interface BucketOptions {
  /**
   * Objects are written once and never replaced (the attachments bucket): every PUT, presigned or
   * not, carries `If-None-Match: *`, so bytes that were checked stay the bytes that were checked.
   * A bucket whose objects change in place (the documents bucket) leaves it off.
   */
  writeOnce?: boolean;
}

/** DeleteObjects' per-key error codes that a retry may clear (S3's documented 500 and 503 codes). */
const TRANSIENT_S3_CODES = new Set(["InternalError", "ServiceUnavailable", "SlowDown"]);

export class S3FileObjects implements FileObjects {
  private readonly s3: S3Client;

  constructor(
    private readonly bucket: string,
    private readonly options: BucketOptions = {},
  ) {
    // Checksums only where S3 requires them: by default the SDK signs the CRC32 of the (empty) body
    // it presigns into the URL, and S3 then refuses every real upload to it (BadDigest).
    this.s3 = new S3Client({ requestChecksumCalculation: "WHEN_REQUIRED" });
  }

  async uploadUrl(key: string, mediaType: string, bytes: number, expiresIn: number): Promise<UploadGrant> {
    // Length, type and the write-once precondition are signed: S3 refuses a PUT of any other size or
    // type, or without If-None-Match, and a PUT onto an object that exists (412), so the limit holds
    // at upload and a replayed URL cannot replace bytes already there.
    const once: Record<string, string> = this.options.writeOnce ? { "if-none-match": "*" } : {};
    const url = await getSignedUrl(
      this.s3,
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ContentType: mediaType,
        ContentLength: bytes,
        ...(this.options.writeOnce ? { IfNoneMatch: "*" } : {}),
      }),
      { expiresIn, signableHeaders: new Set(["content-type", "content-length", ...Object.keys(once)]) },
    );
    return { url, headers: { "content-type": mediaType, ...once } };
  }

  downloadUrl(key: string, fileName: string, expiresIn: number): Promise<string> {
    return getSignedUrl(
      this.s3,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`,
      }),
      { expiresIn },
    );
  }

  async read(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await out.Body!.transformToByteArray();
    } catch (err) {
      if (err instanceof S3ServiceException && (err.name === "NoSuchKey" || err.$metadata.httpStatusCode === 404))
        return undefined;
      throw err;
    }
  }

  async write(key: string, body: Uint8Array, mediaType: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: mediaType,
        ...(this.options.writeOnce ? { IfNoneMatch: "*" } : {}),
      }),
    );
  }

  async delete(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const out = await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      // S3 answers 200 with the keys it could not delete listed (AccessDenied, InternalError): a
      // deletion that left objects behind must fail, so its caller (an erasure) is retried.
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        const message = `S3 did not delete ${failed.length} of ${Math.min(1000, keys.length - i)} objects: ${failed
          .slice(0, 3)
          .map((e) => `${e.Key} (${e.Code})`)
          .join(", ")}`;
        // S3's passing faults are worth a retry (503, as asAppError answers a throttle); others are not.
        if (failed.every((e) => TRANSIENT_S3_CODES.has(e.Code ?? "")))
          throw new AppError(503, "service_unavailable", message);
        throw new Error(message);
      }
    }
  }

  async deleteUnder(prefix: string): Promise<void> {
    // Listed page by page and each page deleted before the next: a continuation token stays valid.
    let token: string | undefined;
    do {
      const out = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      await this.delete((out.Contents ?? []).map((o) => o.Key!));
      token = out.NextContinuationToken;
    } while (token);
  }
}
