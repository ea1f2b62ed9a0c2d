import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { pngBytes } from "../support/images";
import { apiCaller } from "../support/api-call";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { partitionItems } from "../support/scan";
import { localStackDynamo } from "../support/local-stack";

// Must show: a CSV uploaded through the presigned flow, asked about and queried in chat, and
// unreadable to anyone else, all over HTTP against the stack `npm start` runs.
const dataDir = mkdtempSync(join(tmpdir(), "agent-files-e2e-"));
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT", OFFLINE_STREAM_DELAY_MS: "0" });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const call = apiCaller(() => stack.url);

const SALES = "region,amount,rep\nnorth,10.5,ann\nsouth,3,bob\nnorth,4.5,cid\neast,7,dee\nsouth,2.25,eve\n";

async function newSession(user: string) {
  const res = await call("POST", "/api/chat", user, { message: "hi" });
  expect(res.status).toBe(200);
  return res.body.session_id as string;
}

/** A call with the Host header given (fetch sets its own from the URL), over the stack's own address. */
function callWithHost(host: string, method: string, path: string, user: string, body?: unknown) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: new URL(stack.url).port, method, path, headers: { host, "x-user-id": user } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function upload(user: string, sessionId: string, name: string, content: string | Buffer, mediaType = "text/csv") {
  const bytes = Buffer.from(content);
  const created = await call("POST", `/api/sessions/${sessionId}/files`, user, {
    name,
    media_type: mediaType,
    bytes: bytes.length,
  });
  expect(created.status).toBe(201);
  const put = await fetch(created.body.upload_url, {
    method: "PUT",
    body: bytes,
    headers: created.body.headers,
  });
  expect(put.status).toBe(200);
  const done = await call("POST", `/api/sessions/${sessionId}/files/${created.body.file_id}/complete`, user);
  expect(done.status).toBe(200);
  return { fileId: created.body.file_id as string, file: done.body, uploadUrl: created.body.upload_url as string };
}

describe("attachments on the local stack", () => {
  let sessionId: string;
  let fileId: string;

  it("uploads a CSV through the presigned flow; it becomes ready with its columns", async () => {
    sessionId = await newSession("alice");
    const { fileId: id, file } = await upload("alice", sessionId, "sales.csv", SALES);
    fileId = id;
    expect(file).toMatchObject({ status: "ready", table: "sales", row_count: 5 });
    expect(file.columns).toEqual([
      { name: "region", type: "VARCHAR" },
      { name: "amount", type: "DOUBLE" },
      { name: "rep", type: "VARCHAR" },
    ]);
    const list = await call("GET", `/api/sessions/${sessionId}/files`, "alice");
    expect(list.body.files.map((f: { name: string }) => f.name)).toEqual(["sales.csv"]);
    expect(list.body.files[0].key).toBeUndefined();
  });

  it('"what columns does sales.csv have?" lists them', async () => {
    const res = await call("POST", "/api/chat", "alice", {
      message: "what columns does sales.csv have?",
      session_id: sessionId,
    });
    expect(res.status).toBe(200);
    expect(res.body.reply).toContain("region (VARCHAR), amount (DOUBLE), rep (VARCHAR)");
  });

  it("runs SQL in backticks and answers the correct sums", async () => {
    const res = await call("POST", "/api/chat", "alice", {
      message: "run `SELECT region, SUM(amount) FROM sales GROUP BY region ORDER BY region`",
      session_id: sessionId,
    });
    expect(res.status).toBe(200);
    expect(res.body.reply).toContain("east | 7\nnorth | 15\nsouth | 5.25");
  });

  it("says it cannot write SQL from plain language", async () => {
    const res = await call("POST", "/api/chat", "alice", {
      message: "which region sold most in sales.csv?",
      session_id: sessionId,
    });
    expect(res.body.reply).toMatch(/cannot turn a plain-language question into SQL/);
  });

  it("a SQL escape is a tool error the reply relays; the session goes on", async () => {
    const res = await call("POST", "/api/chat", "alice", {
      message: "run `SELECT * FROM read_csv('/etc/passwd')`",
      session_id: sessionId,
    });
    expect(res.status).toBe(200);
    expect(res.body.reply).toMatch(/disabled by configuration/);
    expect(res.body.reply).not.toMatch(/root:/);
  });

  it("another user's or another session's file is never readable", async () => {
    // Bob cannot list, download, complete or delete Alice's file.
    expect((await call("GET", `/api/sessions/${sessionId}/files`, "bob")).status).toBe(404);
    expect((await call("GET", `/api/files/${fileId}`, "bob")).status).toBe(404);
    expect((await call("POST", `/api/sessions/${sessionId}/files/${fileId}/complete`, "bob")).status).toBe(404);
    expect((await call("DELETE", `/api/sessions/${sessionId}/files/${fileId}`, "bob")).status).toBe(404);
    // Alice's other session has no data file: its SQL sees no table of the first session.
    const other = await newSession("alice");
    const res = await call("POST", "/api/chat", "alice", { message: "run `SELECT * FROM sales`", session_id: other });
    expect(res.body.reply).toMatch(/no data files/);
    // Bob's own session with his own sales.csv: his query sees his rows only, and Alice's only hers.
    const bobs = await newSession("bob");
    await upload("bob", bobs, "sales.csv", "region,amount\nwest,1\n");
    const bobQuery = await call("POST", "/api/chat", "bob", {
      message: "run `SELECT region FROM sales`",
      session_id: bobs,
    });
    expect(bobQuery.body.reply).toContain("west");
    expect(bobQuery.body.reply).not.toContain("north");
    // Alice's download works, and the URL serves her bytes; a tampered URL does not.
    const download = await call("GET", `/api/files/${fileId}`, "alice");
    expect(download.status).toBe(200);
    expect(await (await fetch(download.body.download_url)).text()).toBe(SALES);
    expect((await fetch(download.body.download_url.replace(/signature=../, "signature=00"))).status).toBe(403);
  });

  it("rejects a file whose bytes are not what it claims, and an upload of another length", async () => {
    const { file } = await upload("alice", sessionId, "cat.png", "this is not a png at all", "image/png");
    expect(file).toMatchObject({ status: "rejected" });
    expect(file.reason).toMatch(/checked by its bytes/);
    const created = await call("POST", `/api/sessions/${sessionId}/files`, "alice", {
      name: "x.csv",
      media_type: "text/csv",
      bytes: 4,
    });
    const put = await fetch(created.body.upload_url, {
      method: "PUT",
      body: "a,b\n1,2\n",
      headers: created.body.headers,
    });
    expect(put.status).toBe(400);
  });

  it("an upload completes by the bucket's notification alone, without the complete call", async () => {
    const bytes = Buffer.from("k,v\na,1\n");
    const created = await call("POST", `/api/sessions/${sessionId}/files`, "alice", {
      name: "kv.csv",
      media_type: "text/csv",
      bytes: bytes.length,
    });
    const before = (await call("GET", `/api/sessions/${sessionId}/files`, "alice")).body.files;
    expect(before.find((f: { file_id: string }) => f.file_id === created.body.file_id).status).toBe("pending");
    await fetch(created.body.upload_url, { method: "PUT", body: bytes, headers: created.body.headers });
    const deadline = Date.now() + 10_000;
    let file: { status: string; row_count?: number } | undefined;
    while (Date.now() < deadline) {
      const files = (await call("GET", `/api/sessions/${sessionId}/files`, "alice")).body.files;
      file = files.find((f: { file_id: string }) => f.file_id === created.body.file_id);
      if (file?.status !== "pending") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(file).toMatchObject({ status: "ready", row_count: 1 });
    // A late complete call answers the settled file as it is.
    const late = await call("POST", `/api/sessions/${sessionId}/files/${created.body.file_id}/complete`, "alice");
    expect(late.body).toMatchObject({ status: "ready", row_count: 1 });
  });

  it("bad requests are precise 4xx", async () => {
    const bad = await call("POST", `/api/sessions/${sessionId}/files`, "alice", {
      name: "a.exe",
      media_type: "application/x-msdownload",
      bytes: 3,
    });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "unsupported_media_type" } } });
    const big = await call("POST", `/api/sessions/${sessionId}/files`, "alice", {
      name: "a.csv",
      media_type: "text/csv",
      bytes: 10 ** 9,
    });
    expect(big).toMatchObject({ status: 413, body: { error: { code: "file_too_large" } } });
    expect((await call("GET", `/api/files/not-a-uuid`, "alice")).status).toBe(400);
  });

  it("deleting the session deletes its files", async () => {
    const sessionDir = join(dataDir, "attachments", "users", "alice", "sessions", sessionId);
    const objects = () => (existsSync(sessionDir) ? readdirSync(sessionDir).length : 0);
    expect(objects()).toBe(2); // sales.csv and kv.csv; rejected uploads were deleted when rejected
    expect((await call("DELETE", `/api/sessions/${sessionId}`, "alice")).status).toBe(204);
    expect(objects()).toBe(0);
    expect((await call("GET", `/api/files/${fileId}`, "alice")).status).toBe(404);
  });

  it("sends an attached image with a message: the stand-in reads its format and size, the history lists it", async () => {
    const session = await newSession("hana");
    const { fileId: image } = await upload("hana", session, "chart.png", pngBytes(64, 48), "image/png");
    const asked = await call("POST", "/api/chat", "hana", {
      message: "what is in this picture?",
      session_id: session,
      attachments: [image],
    });
    expect(asked.status).toBe(200);
    expect(asked.body.reply).toMatch(/offline stand-in.*cannot see pictures.*PNG, 64x48 pixels/);
    const history = await call("GET", `/api/sessions/${session}/messages`, "hana");
    expect(history.body.at(-2)).toMatchObject({
      role: "user",
      content: "what is in this picture?",
      attachments: [{ file_id: image, name: "chart.png", media_type: "image/png" }],
    });
  });

  it("refuses attachments that are not ready images of the caller's session, writing nothing", async () => {
    const session = await newSession("ivo");
    const { fileId: csv } = await upload("ivo", session, "data.csv", SALES);
    const other = await newSession("jun");
    const { fileId: theirs } = await upload("jun", other, "theirs.png", pngBytes(8, 8), "image/png");
    const { fileId: mine } = await upload("ivo", session, "mine.png", pngBytes(8, 8), "image/png");
    const cases: [Record<string, unknown>, string][] = [
      [{ message: "look", attachments: [mine] }, "invalid_attachment"], // a new session has no files
      [{ message: "look", session_id: session, attachments: [csv] }, "invalid_attachment"],
      [{ message: "look", session_id: session, attachments: [theirs] }, "invalid_attachment"],
      [{ message: "look", session_id: session, attachments: ["not-a-uuid"] }, "invalid_attachments_0"],
      [
        { message: "look", session_id: session, attachments: Array.from({ length: 21 }, () => mine) },
        "attachments_too_large",
      ],
    ];
    for (const [body, code] of cases) {
      const res = await call("POST", "/api/chat", "ivo", body);
      expect([res.status, res.body.error.code]).toEqual([400, code]);
    }
    // Not ivo's session: 404 before any of its files is read, as for every route naming someone else's session.
    const notHis = await call("POST", "/api/chat", "ivo", {
      message: "look",
      session_id: other,
      attachments: [theirs],
    });
    expect([notHis.status, notHis.body.error.code]).toEqual([404, "session_not_found"]);
    expect((await call("GET", `/api/sessions/${session}/messages`, "ivo")).body).toHaveLength(2);
  });

  it("names the origin the request came in on in its URLs (a playground on 127.0.0.1 uploads same-origin), and refuses a Host not of this machine", async () => {
    const session = await newSession("lee");
    const port = new URL(stack.url).port;
    const bytes = Buffer.from("k,v\na,1\n");
    const created = async (host: string) => {
      const res = await callWithHost(host, "POST", `/api/sessions/${session}/files`, "lee", {
        name: "kv.csv",
        media_type: "text/csv",
        bytes: bytes.length,
      });
      expect(res.status).toBe(201);
      return res.body as { file_id: string; upload_url: string; headers: Record<string, string> };
    };

    const onLoopback = await created(`127.0.0.1:${port}`);
    expect(new URL(onLoopback.upload_url).origin).toBe(`http://127.0.0.1:${port}`);
    const put = await fetch(onLoopback.upload_url, {
      method: "PUT",
      body: bytes,
      headers: onLoopback.headers,
    });
    expect(put.status).toBe(200);
    const done = await callWithHost(
      `127.0.0.1:${port}`,
      "POST",
      `/api/sessions/${session}/files/${onLoopback.file_id}/complete`,
      "lee",
    );
    expect(done.body.status).toBe("ready");
    const download = await callWithHost(`127.0.0.1:${port}`, "GET", `/api/files/${onLoopback.file_id}`, "lee");
    expect(new URL(download.body.download_url).origin).toBe(`http://127.0.0.1:${port}`);

    expect(new URL((await created(`localhost:${port}`)).upload_url).origin).toBe(`http://localhost:${port}`);
    expect(new URL((await created(`[::1]:${port}`)).upload_url).origin).toBe(`http://[::1]:${port}`);
    // Any other Host is refused before anything is made (the loopback default: no DNS rebinding).
    for (const host of ["evil.example", `127.0.0.1:${port}/x`, "a b:80", "127.0.0.1:99999", `user@127.0.0.1:${port}`]) {
      const refused = await callWithHost(host, "POST", `/api/sessions/${session}/files`, "lee", {
        name: "kv.csv",
        media_type: "text/csv",
        bytes: bytes.length,
      });
      expect([host, refused.status, refused.body?.error?.code]).toEqual([host, 421, "host_not_allowed"]);
    }
  });

  it("takes a small image inline: stored as a file of the session, sent like an upload, listed in the history", async () => {
    const session = await newSession("kai");
    const data = pngBytes(32, 16).toString("base64");
    const asked = await call("POST", "/api/chat", "kai", {
      message: "and this one?",
      session_id: session,
      images: [{ media_type: "image/png", data }],
    });
    expect(asked.status).toBe(200);
    expect(asked.body.reply).toMatch(/PNG, 32x16 pixels/);
    const files = await call("GET", `/api/sessions/${session}/files`, "kai");
    expect(files.body.files).toEqual([
      expect.objectContaining({ name: "image-1.png", status: "ready", kind: "image" }),
    ]);
    const history = await call("GET", `/api/sessions/${session}/messages`, "kai");
    expect(history.body.at(-2).attachments).toEqual([
      { file_id: files.body.files[0].file_id, name: "image-1.png", media_type: "image/png" },
    ]);

    const refused: [Record<string, unknown>, number, string][] = [
      [{ images: [{ media_type: "image/png", data: "not base64!" }] }, 400, "invalid_images_0_data"],
      [{ images: [{ media_type: "image/bmp", data }] }, 400, "invalid_images_0_media_type"],
      [
        { images: [{ media_type: "image/png", data: Buffer.from("just text").toString("base64") }] },
        400,
        "invalid_image",
      ],
      [
        { images: [{ media_type: "image/png", data: Buffer.alloc(1024 * 1024 + 1).toString("base64") }] },
        413,
        "images_too_large",
      ],
    ];
    for (const [extra, status, code] of refused) {
      const res = await call("POST", "/api/chat", "kai", { message: "look", session_id: session, ...extra });
      expect([res.status, res.body.error.code]).toEqual([status, code]);
    }
    expect((await call("GET", `/api/sessions/${session}/files`, "kai")).body.files).toHaveLength(1);
  });
});

describe("a session whose deletion stopped part-way (its owner record marked deleting, its lease let go)", () => {
  it("serves none of its files nor its thread, keeps its id taken, and a retried DELETE /threads/{id} finishes it", async () => {
    const user = "half-deleted";
    const sessionId = await newSession(user);
    const { fileId } = await upload(user, sessionId, "notes.csv", SALES);
    expect((await call("GET", `/api/files/${fileId}`, user)).status).toBe(200);
    // What a deletion leaves when a store fails after its lease write: the mark, no lease.
    const { client, table } = localStackDynamo(stack);
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: sessionId }, sk: { S: "session" } },
        UpdateExpression: "SET deleting = :t",
        ExpressionAttributeValues: { ":t": { BOOL: true } },
      }),
    );
    expect((await call("GET", `/api/files/${fileId}`, user)).status).toBe(404);
    expect((await call("GET", `/api/sessions/${sessionId}`, user)).status).toBe(404);
    expect((await call("GET", `/threads/${sessionId}`, user)).status).toBe(404);
    expect((await call("POST", "/api/chat", user, { message: "still there?", session_id: sessionId })).status).toBe(
      404,
    );
    const again = await call("POST", "/threads", user, { thread_id: sessionId, if_exists: "do_nothing" });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).not.toContain("region,amount");
    // Anyone else's retry finds nothing; the owner's finishes the deletion.
    expect((await call("DELETE", `/threads/${sessionId}`, "someone-else")).status).toBe(404);
    expect((await call("DELETE", `/threads/${sessionId}`, user)).status).toBe(204);
    expect((await call("DELETE", `/threads/${sessionId}`, user)).status).toBe(404);
    expect(await partitionItems(client, table, sessionId)).toEqual([]);
    client.destroy();
  });
});
