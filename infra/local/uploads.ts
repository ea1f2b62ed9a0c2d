import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join, resolve, sep } from "node:path";
import type { FileObjects } from "../../shared/files/objects";

/**
 * The attachments bucket on the local stack: objects are files under DATA_DIR/attachments,
 * and upload/download URLs point at this server, signed with an HMAC over method, key,
 * expiry, and for uploads the length and type, the way a presigned S3 URL signs them. A PUT
 * of another length or type, an expired or tampered URL, is refused as S3 would (403).
 */
export class FolderFileObjects implements FileObjects {
  private readonly secret = randomBytes(32);

  constructor(
    readonly dir: string,
    private readonly baseUrl: () => string,
    /** where this server serves its URLs: one path per local bucket */
    private readonly urlPrefix = "/_local/files/",
  ) {}

  async uploadUrl(key: string, mediaType: string, bytes: number, expiresIn: number) {
    return this.signedUrl("PUT", key, expiresIn, { length: String(bytes), type: mediaType });
  }

  async downloadUrl(key: string, _fileName: string, expiresIn: number) {
    return this.signedUrl("GET", key, expiresIn, {});
  }

  async read(key: string) {
    const path = this.path(key);
    return existsSync(path) ? new Uint8Array(readFileSync(path)) : undefined;
  }

  async write(key: string, body: Uint8Array) {
    const path = this.path(key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
  }

  async delete(keys: string[]) {
    for (const key of keys) rmSync(this.path(key), { force: true });
  }

  async deleteUnder(prefix: string) {
    rmSync(this.path(prefix), { force: true, recursive: true });
  }

  /** Serves PUT/GET on signed URLs; false for any other path. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith(this.urlPrefix)) return false;
    const key = decodeURIComponent(url.pathname.slice(this.urlPrefix.length));
    const q = url.searchParams;
    const fields: Record<string, string> =
      req.method === "PUT" ? { length: q.get("length") ?? "", type: q.get("type") ?? "" } : {};
    const expected = this.signature(req.method ?? "", key, q.get("expires") ?? "", fields);
    const given = Buffer.from(q.get("signature") ?? "", "hex");
    const deny = (status: number, code: string) => {
      res.writeHead(status, { "content-type": "application/xml" }).end(`<Error><Code>${code}</Code></Error>`);
      return true;
    };
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return deny(403, "SignatureDoesNotMatch");
    if (Number(q.get("expires")) * 1000 < Date.now()) return deny(403, "AccessDenied");
    if (req.method === "GET") {
      const body = await this.read(key);
      if (!body) return deny(404, "NoSuchKey");
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
      return true;
    }
    if (req.headers["content-type"] !== fields.type) return deny(403, "SignatureDoesNotMatch");
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > Number(fields.length)) return deny(400, "IncompleteBody");
      chunks.push(chunk as Buffer);
    }
    if (size !== Number(fields.length)) return deny(400, "IncompleteBody");
    await this.write(key, Buffer.concat(chunks));
    res.writeHead(200).end();
    this.onUpload?.(key);
    return true;
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
    if (!path.startsWith(resolve(this.dir) + sep)) throw new Error(`object key outside the bucket: ${key}`);
    return path;
  }
}

export const localAttachmentsDir = (dataDir: string) => join(dataDir, "attachments");
