import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join, resolve, sep } from "node:path";
import type { BucketOptions, FileObjects, UploadGrant } from "../../shared/files/objects";

/**
 * A local bucket (attachments, or the documents drop folder): objects are files under a folder,
 * and upload/download URLs point at this server, signed with an HMAC over method, key, expiry,
 * and for uploads the length and type, the way a presigned S3 URL signs them. A PUT of another
 * length or type, an expired or tampered URL, is refused as S3 would (403). A write-once bucket
 * takes a PUT only with `If-None-Match: *` (403 without, as S3 answers a missing signed header)
 * and only onto no object (412 PreconditionFailed), as the S3 attachments bucket does.
 */
export class FolderFileObjects implements FileObjects {
  private readonly secret = randomBytes(32);

  constructor(
    readonly dir: string,
    private readonly baseUrl: () => string,
    /** where this server serves its URLs: one path per local bucket */
    private readonly urlPrefix = "/_local/files/",
    private readonly options: BucketOptions = {},
  ) {}

  async uploadUrl(key: string, mediaType: string, bytes: number, expiresIn: number): Promise<UploadGrant> {
    return {
      url: this.signedUrl("PUT", key, expiresIn, { length: String(bytes), type: mediaType }),
      headers: { "content-type": mediaType, ...(this.options.writeOnce ? { "if-none-match": "*" } : {}) },
    };
  }

  async downloadUrl(key: string, _fileName: string, expiresIn: number) {
    return this.signedUrl("GET", key, expiresIn, {});
  }

  async read(key: string) {
    const path = this.path(key);
    return existsSync(path) ? new Uint8Array(readFileSync(path)) : undefined;
  }

  /**
   * Whole or not at all: the bytes go to a hidden file beside the object (the drop folder ignores
   * dotfiles), then become the object in one step: a rename, or in a write-once bucket a hard
   * link, which fails when the object exists (S3's If-None-Match: *).
   */
  async write(key: string, body: Uint8Array) {
    const path = this.path(key);
    mkdirSync(dirname(path), { recursive: true });
    // Not named after the object: its name may already take all the bytes a file name has.
    const temporary = join(dirname(path), `.upload-${randomBytes(6).toString("hex")}.part`);
    writeFileSync(temporary, body);
    try {
      if (!this.options.writeOnce) return renameSync(temporary, path);
      try {
        linkSync(temporary, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new ObjectExists(key);
        throw err;
      }
    } finally {
      rmSync(temporary, { force: true });
    }
  }

  async delete(keys: string[]) {
    for (const key of keys) rmSync(this.path(key), { force: true });
  }

  async deleteUnder(prefix: string) {
    rmSync(this.path(prefix), { force: true, recursive: true });
  }

  /**
   * Serves PUT/GET on signed URLs; false for any other path. Never rejects: whatever a request
   * does (a malformed path, a key the folder cannot hold, a client gone mid-body), it gets S3's
   * answer as an error, and the stack keeps serving.
   */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith(this.urlPrefix)) return false;
    try {
      await this.serve(req, res, url);
    } catch (err) {
      const refused = refusal(err);
      if (refused) deny(res, ...refused);
      else if (req.destroyed && !req.complete)
        res.destroy(); // the client left mid-body: nothing was written, no one to answer
      else {
        console.error("local bucket: request failed", err);
        deny(res, 500, "InternalError");
      }
    }
    return true;
  }

  private async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const key = decodeURIComponent(url.pathname.slice(this.urlPrefix.length));
    const q = url.searchParams;
    const fields: Record<string, string> =
      req.method === "PUT" ? { length: q.get("length") ?? "", type: q.get("type") ?? "" } : {};
    const expected = this.signature(req.method ?? "", key, q.get("expires") ?? "", fields);
    const given = Buffer.from(q.get("signature") ?? "", "hex");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return deny(res, 403, "SignatureDoesNotMatch");
    if (Number(q.get("expires")) * 1000 < Date.now()) return deny(res, 403, "AccessDenied");
    if (req.method === "GET") {
      const body = await this.read(key);
      if (!body) return deny(res, 404, "NoSuchKey");
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
      return;
    }
    if (req.headers["content-type"] !== fields.type) return deny(res, 403, "SignatureDoesNotMatch");
    if (this.options.writeOnce && req.headers["if-none-match"] !== "*") return deny(res, 403, "SignatureDoesNotMatch");
    if (this.options.writeOnce && existsSync(this.path(key))) return deny(res, 412, "PreconditionFailed");
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > Number(fields.length)) return deny(res, 400, "IncompleteBody");
      chunks.push(chunk as Buffer);
    }
    if (size !== Number(fields.length)) return deny(res, 400, "IncompleteBody");
    await this.write(key, Buffer.concat(chunks));
    res.writeHead(200).end();
    this.onUpload?.(key);
  }

  /** The bucket notification's stand-in: called after each completed PUT. */
  onUpload?: (key: string) => void;

  private signedUrl(method: string, key: string, expiresIn: number, fields: Record<string, string>) {
    const expires = String(Math.floor(Date.now() / 1000) + expiresIn);
    const params = new URLSearchParams({
      ...fields,
      expires,
      signature: this.signature(method, key, expires, fields).toString("hex"),
    });
    return `${this.baseUrl()}${this.urlPrefix}${key.split("/").map(encodeURIComponent).join("/")}?${params}`;
  }

  private signature(method: string, key: string, expires: string, fields: Record<string, string>) {
    return createHmac("sha256", this.secret)
      .update(JSON.stringify([method, key, expires, fields.length ?? "", fields.type ?? ""]))
      .digest();
  }

  /** Keys are this API's own (users/<encoded>/sessions/<uuid>/<uuid>); still, never outside the folder. */
  private path(key: string) {
    const path = resolve(this.dir, key);
    if (!path.startsWith(resolve(this.dir) + sep)) throw new KeyOutsideBucket(key);
    return path;
  }
}

/** A write-once bucket's object is there already: S3's 412 to an If-None-Match: * PUT. */
export class ObjectExists extends Error {
  constructor(key: string) {
    super(`an object exists at ${key.slice(0, 64)}; this bucket writes each key once`);
    this.name = "ObjectExists";
  }
}

class KeyOutsideBucket extends Error {
  constructor(key: string) {
    super(`object key outside the bucket: ${key.slice(0, 64)}`);
  }
}

/** S3's answer to a request this bucket cannot serve as asked; undefined for a failure of its own. */
function refusal(err: unknown): [status: number, code: string] | undefined {
  if (err instanceof URIError) return [400, "InvalidURI"];
  if (err instanceof KeyOutsideBucket) return [400, "InvalidArgument"];
  if (err instanceof ObjectExists) return [412, "PreconditionFailed"];
  const code = (err as NodeJS.ErrnoException).code;
  // A name past the file system's limit: S3 keys go to 1024 bytes, a folder's names often to 255.
  if (code === "ENAMETOOLONG") return [400, "KeyTooLongError"];
  // A path through an existing object (a/b where a is a file: mkdir's EEXIST), or an object where a
  // folder of others is: no such key can be made here.
  if (code === "ENOTDIR" || code === "EISDIR" || code === "EEXIST") return [400, "InvalidArgument"];
  return undefined;
}

function deny(res: ServerResponse, status: number, code: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { "content-type": "application/xml" }).end(`<Error><Code>${code}</Code></Error>`);
}

export const localAttachmentsDir = (dataDir: string) => join(dataDir, "attachments");
