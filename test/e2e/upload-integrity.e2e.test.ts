import { existsSync } from "node:fs";
import { join } from "node:path";
import { localStackForTests } from "../support/local-stack";
import { apiCaller } from "../support/api-call";

// A signed upload URL writes a file's bytes once: they are checked once and cannot be replaced
// afterwards, and bytes that land for a file or session deleted meanwhile are discarded.
const local = localStackForTests("upload-integrity", { OFFLINE_STREAM_DELAY_MS: "0" });

const call = apiCaller(() => local.stack.url);

async function newSession(user: string) {
  const res = await call("POST", "/api/chat", user, { message: "hi" });
  expect(res.status).toBe(200);
  return res.body.session_id as string;
}

interface Grant {
  file_id: string;
  upload_url: string;
  headers: Record<string, string>;
}

async function create(user: string, session: string, name: string, bytes: number, mediaType = "text/csv") {
  const res = await call("POST", `/api/sessions/${session}/files`, user, { name, media_type: mediaType, bytes });
  expect(res.status).toBe(201);
  return res.body as Grant;
}

/** The PUT as the API told the client to make it: the URL with the headers it answered. */
const put = (grant: Grant, body: string | Buffer) =>
  fetch(grant.upload_url, { method: "PUT", body, headers: grant.headers });

/** Where the local bucket keeps a URL's object. */
const objectPath = (grant: Grant) =>
  join(
    local.dataDir,
    "attachments",
    decodeURIComponent(new URL(grant.upload_url).pathname.slice("/_local/files/".length)),
  );

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not reached: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("signed upload URLs", () => {
  it("answers a completion whose bytes never came 409 upload_missing, as S3 answers the missing key to a role that may list", async () => {
    // Without s3:ListBucket, S3 answers a GetObject of a missing key 403, not 404: the local stack
    // holds the files function to its grants as S3 would (infra/local/granted-backends.ts).
    const session = await newSession("nia");
    const grant = await create("nia", session, "later.csv", 12);
    const done = await call("POST", `/api/sessions/${session}/files/${grant.file_id}/complete`, "nia");
    expect([done.status, done.body.error?.code ?? done.body.code]).toEqual([409, "upload_missing"]);
  });

  it("answer the headers the PUT must carry: its type, and If-None-Match (the object is written once)", async () => {
    const session = await newSession("ann");
    const grant = await create("ann", session, "a.csv", 8);
    expect(grant.headers).toEqual({ "content-type": "text/csv", "if-none-match": "*" });
    // Without the precondition the URL's signature does not match, as S3 answers a missing signed header.
    const bare = await fetch(grant.upload_url, {
      method: "PUT",
      body: "k,v\na,1\n",
      headers: { "content-type": "text/csv" },
    });
    expect(bare.status).toBe(403);
  });

  it("cannot replace a file's checked bytes: a replay of the URL after it is ready is refused", async () => {
    const session = await newSession("ann");
    const grant = await create("ann", session, "kv.csv", 8);
    expect((await put(grant, "k,v\na,1\n")).status).toBe(200);
    const done = await call("POST", `/api/sessions/${session}/files/${grant.file_id}/complete`, "ann");
    expect(done.body).toMatchObject({ status: "ready", row_count: 1 });
    const replay = await put(grant, "k,v\nb,2\n");
    expect(replay.status).toBe(412);
    expect(await replay.text()).toContain("PreconditionFailed");
    const download = await call("GET", `/api/files/${grant.file_id}`, "ann");
    expect(await (await fetch(download.body.download_url)).text()).toBe("k,v\na,1\n");
  });

  it("a second PUT before the check is refused too: the bytes checked are the first ones", async () => {
    const session = await newSession("ann");
    const grant = await create("ann", session, "kv.csv", 8);
    expect((await put(grant, "k,v\na,1\n")).status).toBe(200);
    expect((await put(grant, "x\x00\x00\x00\x00\x00\x00\n")).status).toBe(412);
    const done = await call("POST", `/api/sessions/${session}/files/${grant.file_id}/complete`, "ann");
    expect(done.body).toMatchObject({ status: "ready", row_count: 1 });
  });

  it("discards bytes replayed after the file was rejected", async () => {
    const session = await newSession("ann");
    const garbage = "not a png at all";
    const grant = await create("ann", session, "cat.png", garbage.length, "image/png");
    expect((await put(grant, garbage)).status).toBe(200);
    const done = await call("POST", `/api/sessions/${session}/files/${grant.file_id}/complete`, "ann");
    expect(done.body).toMatchObject({ status: "rejected" });
    expect(existsSync(objectPath(grant))).toBe(false);
    expect((await put(grant, garbage)).status).toBe(200); // the bucket takes it (there is no object) ...
    await until(() => !existsSync(objectPath(grant)), "the replayed object is discarded"); // ... the notification drops it
    expect((await call("GET", `/api/sessions/${session}/files`, "ann")).body.files[0]).toMatchObject({
      status: "rejected",
    });
  });

  it("discards an upload that lands after its file was deleted", async () => {
    const session = await newSession("ann");
    const grant = await create("ann", session, "late.csv", 8);
    expect((await call("DELETE", `/api/sessions/${session}/files/${grant.file_id}`, "ann")).status).toBe(204);
    expect((await put(grant, "k,v\na,1\n")).status).toBe(200);
    await until(() => !existsSync(objectPath(grant)), "the late object is discarded");
    expect((await call("GET", `/api/sessions/${session}/files`, "ann")).body.files).toEqual([]);
  });

  it("discards an upload that lands after its session was deleted", async () => {
    const session = await newSession("ann");
    const grant = await create("ann", session, "late.csv", 8);
    expect((await call("DELETE", `/api/sessions/${session}`, "ann")).status).toBe(204);
    expect((await put(grant, "k,v\na,1\n")).status).toBe(200);
    await until(() => !existsSync(objectPath(grant)), "the late object is discarded");
  });

  it("works for any user id: dot segments, spaces, and long non-ASCII ids", async () => {
    for (const user of [".", "..", "a.b", "a b/c", "é".repeat(128)]) {
      const session = await newSession(user);
      const grant = await create(user, session, "kv.csv", 8);
      expect([user.slice(0, 8), (await put(grant, "k,v\na,1\n")).status]).toEqual([user.slice(0, 8), 200]);
      const done = await call("POST", `/api/sessions/${session}/files/${grant.file_id}/complete`, user);
      expect([user.slice(0, 8), done.body.status]).toEqual([user.slice(0, 8), "ready"]);
    }
  });
});
