import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { partitionItems } from "../support/scan";
import { Client } from "@langchain/langgraph-sdk";
import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { localStackDataDir, localStackDynamo, localStackForTests } from "../support/local-stack";

// The Agent Server API and the session routes under hostile input, on the local stack (issue 27):
// metadata DynamoDB cannot store, one deletion for both delete routes, ill-formed message ids,
// history that cannot be bent, and the statuses a client relies on. The offline model streams a
// word every 100 ms (a long message's reply lasts seconds, so a rollback lands mid-turn); the
// lease beats every second.

const holder = localStackForTests("agent-server-integrity", {
  OFFLINE_STREAM_DELAY_MS: "100",
  SESSION_LEASE_MS: "3000",
});
const url = () => holder.stack.url;

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

async function call(user: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${url()}${path}`, {
    method,
    headers: { "x-user-id": user, "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

const run = (content: string, extra: Record<string, unknown> = {}) => ({
  assistant_id: "chat",
  input: {
    messages: [{ type: "human", content, ...(extra.id ? { id: extra.id } : {}) }],
  },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "id")),
});

const dataDir = () => localStackDataDir(holder.stack);

let dynamo: DynamoDBClient;
let table: string;
beforeAll(() => {
  ({ client: dynamo, table } = localStackDynamo(holder.stack));
});
afterAll(() => dynamo?.destroy());

const partition = (pk: string) => partitionItems(dynamo, table, pk);

/** A ready CSV file in the session, uploaded through its signed URL. */
async function uploadFile(user: string, sessionId: string) {
  const created = await call(user, "POST", `/api/sessions/${sessionId}/files`, {
    name: "a.csv",
    media_type: "text/csv",
    bytes: 8,
  });
  expect(created.status, created.text).toBe(201);
  const put = await fetch(created.body.upload_url, {
    method: "PUT",
    headers: created.body.headers,
    body: "a,b\n1,2\n",
  });
  expect(put.status, `${user}: ${created.body.upload_url}`).toBe(200);
  const done = await call(user, "POST", `/api/sessions/${sessionId}/files/${created.body.file_id}/complete`);
  expect(done.body?.status, done.text).toBe("ready");
  return created.body.file_id as string;
}

/** The attachments folder's files under a session. */
const objectsOf = (sessionId: string) =>
  (readdirSync(join(dataDir(), "attachments"), { recursive: true }) as string[]).filter((p) =>
    p.includes(`${sessionId}/`),
  );

describe("metadata is bounded before it is written", () => {
  const deep = () => {
    let v: unknown = 1;
    for (let i = 0; i < 40; i++) v = { a: v };
    return v;
  };
  const unstorable: [string, Record<string, unknown>][] = [
    ["a number past the document client's range", { n: 1e300 }],
    ["a number under DynamoDB's", { n: 5e-324 }],
    ["hundreds of KB", { big: "x".repeat(300_000) }],
    ["a lone surrogate in a key", { "k\ud800": 1 }],
    ["nesting past DynamoDB's 32 levels", { deep: deep() }],
  ];

  it.each(unstorable)("%s: a 400 from runs, thread create and thread patch, nothing written", async (_, metadata) => {
    const thread = await call("mia", "POST", "/threads", {});
    const wait = await call("mia", "POST", `/threads/${thread.body.thread_id}/runs/wait`, run("hi", { metadata }));
    expect(wait.status, wait.text).toBe(400);
    expect(wait.body.error.code).toMatch(/^(invalid_metadata|metadata_too_large)$/);
    const stateless = await call("mia", "POST", "/runs/wait", run("hi", { metadata }));
    expect(stateless.status, stateless.text).toBe(400);
    const created = await call("mia", "POST", "/threads", { metadata });
    expect(created.status, created.text).toBe(400);
    const patched = await call("mia", "PATCH", `/threads/${thread.body.thread_id}`, { metadata });
    expect(patched.status, patched.text).toBe(400);
    expect((await call("mia", "GET", `/threads/${thread.body.thread_id}/state`)).body.values).toEqual({});
    expect((await call("mia", "GET", `/threads/${thread.body.thread_id}`)).body.metadata).toEqual({});
  });

  it("bounds what patches add up to, and the stack keeps answering", async () => {
    const thread = await call("mia", "POST", "/threads", {});
    const path = `/threads/${thread.body.thread_id}`;
    const chunk = (k: string) => ({ metadata: { [k]: "y".repeat(30_000) } });
    expect((await call("mia", "PATCH", path, chunk("a"))).status).toBe(200);
    expect((await call("mia", "PATCH", path, chunk("b"))).status).toBe(200);
    const third = await call("mia", "PATCH", path, chunk("c"));
    expect(third.status, third.text).toBe(400);
    expect(third.body.error.code).toBe("metadata_too_large");
    // Removing a key makes room again.
    expect((await call("mia", "PATCH", path, { metadata: { a: null, c: "small" } })).status).toBe(200);
    expect((await fetch(`${url()}/health`)).status).toBe(200);
    const ok = await call(
      "mia",
      "POST",
      `${path}/runs/wait`,
      run("hi", { metadata: { n: 2 ** 53 - 1, small: 1e-130 } }),
    );
    expect(ok.status, ok.text).toBe(200);
  });
});

describe("one way to delete a session", () => {
  it.each([
    ["DELETE /threads/{id}", (id: string) => `/threads/${id}`],
    ["DELETE /api/sessions/{id}", (id: string) => `/api/sessions/${id}`],
  ])("%s removes state, owner, transcript, runs, thread record, file records and objects", async (_, pathOf) => {
    const thread = await call("noa", "POST", "/threads", {
      metadata: { topic: "to delete" },
    });
    const id: string = thread.body.thread_id;
    expect((await call("noa", "POST", `/threads/${id}/runs/wait`, run("hi"))).status).toBe(200);
    const fileId = await uploadFile("noa", id);
    expect(objectsOf(id)).toHaveLength(1);

    const removed = await call("noa", "DELETE", pathOf(id));
    expect(removed.status, removed.text).toBe(204);
    expect(objectsOf(id)).toEqual([]);
    // The upload's own notification may still be settling the file beside the complete call: it
    // claims the file's table name, finds the file gone and gives the name back (FileService.settle).
    // Nothing may stay once it has.
    await expect.poll(() => partition(id), { timeout: 3000, interval: 100 }).toEqual([]);
    expect(await partition(`file#${fileId}`)).toEqual([]);
    expect((await partition("threads#noa")).map((i) => i.sk!.S)).not.toContain(id);
    expect((await call("noa", "GET", `/api/sessions/${id}/messages`)).status).toBe(404);
    expect((await call("noa", "GET", `/threads/${id}`)).status).toBe(404);
    expect((await call("noa", "GET", `/api/files/${fileId}`)).status).toBe(404);
    const search = await call("noa", "POST", "/threads/search", {
      ids: [id],
    });
    expect(search.body).toEqual([]);
    const sessions = await call("noa", "GET", "/api/sessions?limit=100");
    expect(sessions.body.sessions.map((s: { session_id: string }) => s.session_id)).not.toContain(id);
  });
});

describe("storable text in runs", () => {
  it("refuses a lone surrogate in an input message id, and later turns still answer", async () => {
    const thread = await call("oli", "POST", "/threads", {});
    const path = `/threads/${thread.body.thread_id}/runs/wait`;
    for (const id of ["x\ud800", "\udfff", "a\u0000b"]) {
      const bad = await call("oli", "POST", path, run("hi", { id }));
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.error.code).toBe("invalid_input_messages_0_id");
    }
    expect((await call("oli", "POST", path, run("hi"))).status).toBe(200);
    expect((await call("oli", "POST", path, run("and again"))).status).toBe(200);
    expect((await call("oli", "GET", `/api/sessions/${thread.body.thread_id}/messages`)).body).toHaveLength(4);
  });
});

describe("history cannot be bent", () => {
  it("refuses a client message id the thread already holds (409), and history stays as it was", async () => {
    const thread = await call("pia", "POST", "/threads", {});
    const path = `/threads/${thread.body.thread_id}/runs/wait`;
    expect((await call("pia", "POST", path, run("first", { id: "client-1" }))).status).toBe(200);
    const state = await call("pia", "GET", `/threads/${thread.body.thread_id}/state`);
    const again = await call("pia", "POST", path, run("rewritten", { id: "client-1" }));
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.code).toBe("message_id_exists");
    // The id of the agent's own reply is the thread's too.
    const replyId = state.body.values.messages[1].id;
    expect((await call("pia", "POST", path, run("rewritten", { id: replyId }))).status).toBe(409);
    expect((await call("pia", "GET", `/threads/${thread.body.thread_id}/state`)).body.values).toEqual(
      state.body.values,
    );
    const transcript = await call("pia", "GET", `/api/sessions/${thread.body.thread_id}/messages`);
    expect(transcript.body.map((m: { content: string }) => m.content)[0]).toBe("first");
    expect(transcript.body).toHaveLength(2);
  });

  it("a rollback of a /api/chat turn takes it out of the graph state as out of the transcript", async () => {
    const first = await call("quinn", "POST", "/api/chat", { message: "hi" });
    const sessionId: string = first.body.session_id;
    const long = `Please note ${"that the river runs past the old mill and ".repeat(6)}`;
    const res = await fetch(`${url()}/api/chat/stream`, {
      method: "POST",
      headers: { "x-user-id": "quinn", "content-type": "application/json" },
      body: JSON.stringify({ message: long, session_id: sessionId }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes('"type":"token"')) text += new TextDecoder().decode((await reader.read()).value);
    const rollback = await call(
      "quinn",
      "POST",
      `/threads/${sessionId}/runs/wait`,
      run("next", { multitask_strategy: "rollback" }),
    );
    expect(rollback.status, rollback.text).toBe(200);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('"type":"error"');
    const state = await call("quinn", "GET", `/threads/${sessionId}/state`);
    const inState = state.body.values.messages
      .filter((m: { type: string }) => m.type === "human")
      .map((m: { content: string }) => m.content);
    const transcript = await call("quinn", "GET", `/api/sessions/${sessionId}/messages`);
    const inTranscript = transcript.body
      .filter((m: { role: string }) => m.role === "user")
      .map((m: { content: string }) => m.content);
    expect(inState).toEqual(["hi", "next"]);
    expect(inTranscript).toEqual(inState);
  }, 60_000);
});

describe("statuses a client relies on", () => {
  it("an unknown checkpoint id is 404, a known one 200, one that cannot be an id 400 (as LangGraph's server)", async () => {
    const thread = await call("ria", "POST", "/threads", {});
    const id = thread.body.thread_id;
    await call("ria", "POST", `/threads/${id}/runs/wait`, run("hi"));
    const state = await call("ria", "GET", `/threads/${id}/state`);
    expect((await call("ria", "GET", `/threads/${id}/state/${state.body.checkpoint.checkpoint_id}`)).status).toBe(200);
    const unknown = await call("ria", "GET", `/threads/${id}/state/${randomUUID()}`);
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.error.code).toBe("checkpoint_not_found");
    expect((await call("ria", "GET", `/threads/${id}/state/not-a-checkpoint`)).status).toBe(400);
  });

  it("a user id with periods uses the store (SDK and raw query) and uploads files", async () => {
    const user = "ann.smith@example.org";
    const put = await call(user, "PUT", "/store/items", {
      namespace: ["memories", user],
      key: "k",
      value: { content: "Flies to Lisbon" },
    });
    expect(put.status, put.text).toBe(204);
    const got = await call(user, "GET", `/store/items?namespace=${encodeURIComponent(`memories.${user}`)}&key=k`);
    expect(got.status, got.text).toBe(200);
    // The SDK refuses labels with periods: the user's label has none, and names the same items.
    const client = new Client({
      apiUrl: url(),
      defaultHeaders: { "x-user-id": user },
      callerOptions: { maxRetries: 0 },
    });
    const namespaces = await client.store.listNamespaces();
    expect(namespaces.namespaces).toEqual([["memories", "ann%2Esmith@example%2Eorg"]]);
    expect((await client.store.getItem(namespaces.namespaces[0]!, "k"))?.value.content).toBe("Flies to Lisbon");

    for (const who of [user, "..", "."]) {
      const chat = await call(who, "POST", "/api/chat", { message: "hi" });
      expect(chat.status, chat.text).toBe(200);
      await uploadFile(who, chat.body.session_id);
    }
  });
});
