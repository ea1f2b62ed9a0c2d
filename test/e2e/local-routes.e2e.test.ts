import { request } from "node:http";
import { localStackForTests } from "../support/local-stack";

// The local stack never dies from a request: every stand-in route (the attachments and documents
// buckets, the Intercom stand-in, the playground's files) answers bad input with a 4xx and keeps
// serving, whatever the path, the body or the client does half-way.
const local = localStackForTests("local-routes");
const ADMIN = { "x-user-id": "ops", "x-user-role": "admin" };

/** Unhandled rejections while this file runs: the stack must leave none behind a request. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on("unhandledRejection", onUnhandled));
afterAll(() => process.off("unhandledRejection", onUnhandled));
afterEach(async () => {
  await new Promise((r) => setTimeout(r, 50));
  expect(unhandled.splice(0)).toEqual([]);
});

interface Reply {
  status: number;
  text: string;
}

/** A raw request (the path goes out exactly as given), answered within 5 s or failed. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string) {
  return new Promise<Reply>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: new URL(local.stack.url).port, method, path, headers, timeout: 5_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** A request whose client sends `sent` of the `length` bytes it announced, then drops the connection. */
function abortMidBody(method: string, path: string, headers: Record<string, string>, length: number, sent: number) {
  return new Promise<void>((resolve) => {
    const req = request({
      host: "127.0.0.1",
      port: new URL(local.stack.url).port,
      method,
      path,
      headers: { ...headers, "content-length": String(length) },
    });
    req.on("error", () => resolve());
    req.on("close", () => resolve());
    req.write(Buffer.alloc(sent, 0x61), () => setTimeout(() => req.destroy(), 20));
  });
}

async function json(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const reply = await send(
    method,
    path,
    { "content-type": "application/json", ...headers },
    body === undefined ? undefined : JSON.stringify(body),
  );
  return { status: reply.status, body: reply.text ? JSON.parse(reply.text) : undefined };
}

const healthy = async () => expect((await send("GET", "/health")).status).toBe(200);
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe("the local stack never dies from a request", () => {
  // Keys went into plain objects, so a name an object already answers (constructor, toString)
  // found that, and the gateway's push on it threw: the connection closed with no answer.
  it("answers a query parameter or header named like an object's own property as API Gateway would", async () => {
    const user = { "x-user-id": "proto-names" };
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect([name, (await send("GET", `/api/sessions?${name}=1`, user)).status]).toEqual([name, 200]);
      expect([name, (await send("GET", "/api/sessions", { ...user, [name]: "1" })).status]).toEqual([name, 200]);
    }
    await healthy();
  });

  it("answers malformed percent-encoding under the bucket routes with a 400", async () => {
    for (const path of [
      "/_local/files/%zz",
      "/_local/files/users/%E0%A4%A/x?expires=1&signature=00",
      "/_local/documents/%",
      "/_local/documents/a%ED%A0%80.md",
    ]) {
      for (const method of ["GET", "PUT"]) {
        const reply = await send(method, path, { "content-type": "text/csv" }, method === "PUT" ? "a" : undefined);
        expect([method, path, reply.status]).toEqual([method, path, 400]);
      }
    }
    await healthy();
  });

  it("survives an upload whose client disconnects mid-body; the upload can still be made afterwards", async () => {
    const user = { "x-user-id": "ann" };
    const session = (await json("POST", "/api/chat", user, { message: "hi" })).body.session_id as string;
    const bytes = Buffer.from(`k,v\n${"a,1\n".repeat(10_000)}`);
    const created = await json("POST", `/api/sessions/${session}/files`, user, {
      name: "kv.csv",
      media_type: "text/csv",
      bytes: bytes.length,
    });
    expect(created.status).toBe(201);
    const uploadHeaders = { "content-type": "text/csv", ...(created.body.headers ?? {}) };
    await abortMidBody("PUT", pathOf(created.body.upload_url), uploadHeaders, bytes.length, 1024);
    await healthy();
    // Nothing half-written was kept: the whole upload still goes through the same URL.
    const put = await send("PUT", pathOf(created.body.upload_url), uploadHeaders, bytes);
    expect(put.status).toBe(200);
    const done = await json("POST", `/api/sessions/${session}/files/${created.body.file_id}/complete`, user);
    expect(done.body).toMatchObject({ status: "ready", row_count: 10_000 });
  });

  it("survives API requests whose client disconnects mid-body", async () => {
    await abortMidBody("POST", "/api/chat", { "x-user-id": "ann", "content-type": "application/json" }, 5000, 10);
    await abortMidBody("POST", "/_local/intercom/customer", { "content-type": "application/json" }, 5000, 10);
    await abortMidBody("POST", "/_local/intercom/conversations", { "content-type": "application/json" }, 5000, 10);
    await healthy();
  });

  it("refuses a document name longer than a file name may be at the API (the local bucket could not hold it)", async () => {
    for (const source of [`${"a".repeat(300)}.md`, `docs/${"é".repeat(200)}.md`]) {
      const granted = await json("POST", "/api/knowledge/uploads", ADMIN, { source, bytes: 5 });
      expect([granted.status, granted.body.error?.code]).toEqual([400, "invalid_source"]);
    }
    await healthy();
  });
});
