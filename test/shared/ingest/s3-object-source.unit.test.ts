import { S3Client } from "@aws-sdk/client-s3";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { closeServer } from "../../../infra/local/close-server";
import { S3ObjectSource, TooLarge } from "../../../shared/ingest/object-source";

// S3's GetObject and HeadObject over HTTP, in their documented shapes: HeadObject's 404 has no
// body (the SDK names it NotFound), GetObject's names NoSuchKey in XML; a 403 is AccessDenied.
const objects = new Map<string, string>([["/docs/kb/guide.md", "# Guide"]]);
let server: Server;
let source: S3ObjectSource;
beforeAll(async () => {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    if (path.startsWith("/docs/kb/secret")) {
      res.writeHead(403, { "content-type": "application/xml" });
      return res.end(
        req.method === "HEAD" ? undefined : "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
      );
    }
    const body = objects.get(path);
    if (body === undefined) {
      res.writeHead(404, { "content-type": "application/xml" });
      return res.end(
        req.method === "HEAD"
          ? undefined
          : "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>",
      );
    }
    res.writeHead(200, { etag: '"0123abcd"', "content-length": String(Buffer.byteLength(body)) });
    res.end(req.method === "HEAD" ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  source = new S3ObjectSource(
    new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      region: "eu-west-1",
      credentials: { accessKeyId: "a", secretAccessKey: "s" },
      maxAttempts: 1,
    }),
  );
});
afterAll(() => closeServer(server));

describe("reading the documents bucket", () => {
  it("tells what a key holds now: its size and bare ETag, or nothing", async () => {
    expect(await source.head("docs", "kb/guide.md")).toEqual({ size: 7, etag: "0123abcd" });
    expect(await source.head("docs", "kb/gone.md")).toBeUndefined();
  });

  it("reads an object, undefined once it is gone, and refuses one over the limit", async () => {
    expect(new TextDecoder().decode((await source.get("docs", "kb/guide.md", 100))!.body)).toBe("# Guide");
    expect(await source.get("docs", "kb/gone.md", 100)).toBeUndefined();
    await expect(source.get("docs", "kb/guide.md", 3)).rejects.toBeInstanceOf(TooLarge);
  });

  it("throws what is not an answer about the object (access denied), so the event is retried", async () => {
    await expect(source.head("docs", "kb/secret.md")).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    await expect(source.get("docs", "kb/secret.md", 100)).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
  });
});
