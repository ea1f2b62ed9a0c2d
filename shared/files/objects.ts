import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

/**
 * Where a session's files live. In AWS: the attachments bucket, with presigned URLs (Lambda's
 * 6 MB payload limit rules out uploads through the API). Locally: a folder under DATA_DIR,
 * with upload and download URLs served by the local server (infra/local/uploads.ts).
 */
export interface FileObjects {
  /** a URL the client PUTs exactly `bytes` bytes of `mediaType` to */
  uploadUrl(key: string, mediaType: string, bytes: number, expiresInSeconds: number): Promise<string>;
  downloadUrl(key: string, fileName: string, expiresInSeconds: number): Promise<string>;
  /** the object's bytes, or undefined when nothing was uploaded */
  read(key: string): Promise<Uint8Array | undefined>;
  /** replaces an object (a data file converted to UTF-8) */
  write(key: string, body: Uint8Array, mediaType: string): Promise<void>;
  delete(keys: string[]): Promise<void>;
  /** removes every object whose key starts with `prefix` (a user's folder, on erasure) */
  deleteUnder(prefix: string): Promise<void>;
}

export class S3FileObjects implements FileObjects {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  uploadUrl(key: string, mediaType: string, bytes: number, expiresIn: number): Promise<string> {
    // Length and type are signed: S3 refuses a PUT of any other size, so the limit holds at upload.
    return getSignedUrl(
      this.s3,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: mediaType, ContentLength: bytes }),
      { expiresIn, signableHeaders: new Set(["content-type", "content-length"]) },
    );
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
    await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: mediaType }));
  }

  async delete(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      await this.s3.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
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
