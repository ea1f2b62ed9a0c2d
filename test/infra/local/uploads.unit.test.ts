import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FolderFileObjects } from "../../../infra/local/uploads";

// The local buckets (attachments and documents): a folder behind presigned-style URLs. Whatever a
// request does, it gets S3's answer as an error, never a dropped rejection that ends the stack.

let dir: string;
let server: Server;
let base: string;
let objects: FolderFileObjects;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "uploads-"));
  process.on("unhandledRejection", onUnhandled);
  objects = new FolderFileObjects(join(dir, "bucket"), () => base);
  // Served the way the local stack serves it: one call per request, nothing around it.
  server = createServer((req, res) => {
    void objects.handle(req, res, new URL(req.url ?? "/", "http://localhost"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
  server.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await new Promise((r) => setTimeout(r, 30));
  expect(unhandled.splice(0)).toEqual([]);
});

const put = (url: string, body: string | Buffer, headers: Record<string, string> = { "content-type": "text/csv" }) =>
  fetch(url, { method: "PUT", body, headers });

describe("the local bucket", () => {
  it("answers a key the folder cannot hold (a name past the file system's limit) with a 400", async () => {
    const { url } = await objects.uploadUrl(`${"a".repeat(300)}.csv`, "text/csv", 3, 60);
    const res = await put(url, "a,b");
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("KeyTooLongError");
    expect((await put((await objects.uploadUrl("ok.csv", "text/csv", 3, 60)).url, "a,b")).status).toBe(200);
  });

  // A key through an object (a.md/c.md where a.md is a file) closed the connection unanswered: the
  // failure came after the whole body was read, and was taken for a client that had left.
  it("answers a key through an existing object, and an object where a folder is, with a 400", async () => {
    const at = async (key: string) => put((await objects.uploadUrl(key, "text/csv", 3, 60)).url, "a,b");
    expect((await at("file.csv")).status).toBe(200);
    const through = await at("file.csv/inside.csv");
    expect(through.status).toBe(400);
    expect(await through.text()).toContain("InvalidArgument");
    expect((await at("folder/inside.csv")).status).toBe(200);
    const over = await at("folder");
    expect(over.status).toBe(400);
    expect(await over.text()).toContain("InvalidArgument");
  });

  // The hidden file beside it kept 200 characters of the name, not bytes: a name of 246 bytes in
  // two- and three-byte characters made a temporary name past the file system's 255.
  it("takes an object whose name of many-byte characters is within the file system's limit", async () => {
    const key = `notes-${"é€".repeat(47)}.md`;
    expect(Buffer.byteLength(key)).toBeLessThanOrEqual(255);
    expect((await put((await objects.uploadUrl(key, "text/csv", 3, 60)).url, "a,b")).status).toBe(200);
  });

  it("answers malformed percent-encoding with a 400", async () => {
    for (const path of ["/_local/files/%zz", "/_local/files/a%E0%A4%A", "/_local/files/%"]) {
      const res = await fetch(`${base}${path}?expires=1&signature=00`);
      expect([path, res.status]).toEqual([path, 400]);
    }
  });

  it("keeps nothing of an upload whose client disconnects mid-body, and serves on", async () => {
    const key = "half.csv";
    const url = new URL((await objects.uploadUrl(key, "text/csv", 100_000, 60)).url);
    await new Promise<void>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: "PUT",
        path: `${url.pathname}${url.search}`,
        headers: { "content-type": "text/csv", "content-length": "100000" },
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.write(Buffer.alloc(1000, 0x61), () => setTimeout(() => req.destroy(), 20));
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(dir, "bucket", key))).toBe(false);
    expect((await put(url.href, Buffer.alloc(100_000, 0x62))).status).toBe(200);
    expect(readdirSync(join(dir, "bucket"))).toContain(key);
  });
});
