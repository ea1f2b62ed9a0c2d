import { ListTablesCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { Client } from "@langchain/langgraph-sdk";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { freshUser, localStackDataDir, localStackDynamo, localStackForTests } from "../support/local-stack";

// A user's data on the stack `npm start` runs: one user fills every store through the real routes
// (turns, a streamed turn, extracted and superseded memories, a file, store items, an Agent Server
// thread and run); the export returns all of it and nothing of another user's; the erasure then
// leaves no trace of the user's id or session ids in any DynamoDB table, bucket folder or Postgres
// table, another user's data untouched; and an extraction message delivered after it creates nothing.
const holder = localStackForTests("user-data-e2e", { OFFLINE_STREAM_DELAY_MS: "0" });
const stack = () => holder.stack;

const erin = freshUser("erin");
const finn = freshUser("finn");

async function call(method: string, path: string, user: string, body?: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(`${stack().url}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-user-id": user, ...extra },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

async function chat(user: string, message: string, sessionId?: string) {
  const res = await call("POST", "/api/chat", user, { message, ...(sessionId ? { session_id: sessionId } : {}) });
  expect(res.status).toBe(200);
  return res.body.session_id as string;
}

async function upload(user: string, sessionId: string) {
  const bytes = Buffer.from("city,visits\nlisbon,3\nporto,1\n");
  const created = await call("POST", `/api/sessions/${sessionId}/files`, user, {
    name: "trips.csv",
    media_type: "text/csv",
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
  expect(done.body.status).toBe("ready");
  return created.body.file_id as string;
}

/** Fills every store for `user`; answers the session ids and thread ids it made. */
async function fill(user: string) {
  const first = await chat(user, "I prefer window seats on long flights");
  await chat(user, "my favourite colour is teal", first);
  await stack().queues.extraction.drained();
  const streamed = await fetch(`${stack().url}/api/chat/stream`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-user-id": user },
    body: JSON.stringify({ message: "Actually my favourite colour is green now" }),
  });
  expect(streamed.status).toBe(200);
  const events = await streamed.text();
  const second = /"session_id":"([0-9a-f-]{36})"/.exec(events)![1]!;
  await stack().queues.extraction.drained();
  // A memory the user deleted leaves a mark without its text (021_forgotten_memories.sql): erased too.
  await chat(user, "my cat is called Mittens", first);
  await stack().queues.extraction.drained();
  const cat = (await call("GET", "/api/memories", user)).body.memories.find((m: { content: string }) =>
    /Mittens/.test(m.content),
  );
  expect((await call("DELETE", `/api/memories/${cat.id}`, user)).status).toBe(204);
  const fileId = await upload(user, first);

  const sdk = new Client({
    apiUrl: stack().url,
    defaultHeaders: { "x-user-id": user },
    callerOptions: { maxRetries: 0 },
  });
  await sdk.store.putItem(["memories", user], "pet", { content: "My dog is called Bolt" });
  await sdk.store.putItem(["notes"], "todo", { text: `call the vet for ${user}` });
  await sdk.assistants.create({ graphId: "chat", name: `${user}'s helper`, config: { configurable: { owner: user } } });
  const thread = await sdk.threads.create();
  await sdk.runs.wait(thread.thread_id, "chat", { input: { messages: [{ role: "user", content: "hello there" }] } });
  // A background run: its event log holds its messages (here the user's id, which the scans look for).
  const background = await sdk.runs.create(thread.thread_id, "chat", {
    input: { messages: [{ role: "user", content: `my locker code is 31337, says ${user}` }] },
  });
  await sdk.runs.join(thread.thread_id, background.run_id);
  await sdk.crons.createForThread(thread.thread_id, "chat", {
    schedule: "0 9 * * 1",
    input: { messages: [{ role: "user", content: `weekly check-in for ${user}` }] },
  });
  await stack().queues.extraction.drained();
  return { sessions: [first, second, thread.thread_id], fileId, threadId: thread.thread_id };
}

/** Every string any DynamoDB table, bucket folder, cron schedule or Postgres table holds, one per item, file, schedule or row. */
async function everything(): Promise<string[]> {
  const found: string[] = [];
  const { client } = localStackDynamo(stack());
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  for (const TableName of TableNames) {
    let start: any;
    do {
      const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) found.push(`dynamodb ${TableName}: ${JSON.stringify(item)}`);
      start = page.LastEvaluatedKey;
    } while (start);
  }
  // The buckets' folders, names and contents. (Not dynalite's and PGlite's own storage files: a
  // deleted row lingers in their logs until compaction, as in any database's; the tables are read above.)
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.push(`file ${path}: ${readFileSync(path).toString("latin1")}`);
    }
  };
  // The crons' schedules: each keeps the firing it sends (EventBridge Scheduler's target input).
  for (const firing of stack().crons.schedules()) found.push(`schedule: ${JSON.stringify(firing)}`);
  walk(join(localStackDataDir(stack()), "attachments"));
  walk(stack().dropDir);
  const db = stack().postgres;
  const tables = await db.query<{ name: string }>(
    "select quote_ident(table_name) as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
  );
  for (const { name } of tables.rows) {
    const rows = await db.query<{ row: string }>(`select t::text as row from ${name} t`);
    for (const { row } of rows.rows) found.push(`postgres ${name}: ${row}`);
  }
  expect(tables.rows.map((t) => t.name)).toEqual(expect.arrayContaining(["agent_memories", "agent_conversations"]));
  return found;
}

const mentioning = (all: string[], needles: string[]) => all.filter((s) => needles.some((n) => s.includes(n)));

describe("a user's data: export, erasure", () => {
  let mine: Awaited<ReturnType<typeof fill>>;
  let theirs: Awaited<ReturnType<typeof fill>>;

  it("fills every store for two users through the real routes", async () => {
    mine = await fill(erin);
    theirs = await fill(finn);
    const memories = (await call("GET", "/api/memories?superseded=1", erin)).body.memories as { content: string }[];
    expect(memories.map((m) => m.content)).toEqual(
      expect.arrayContaining(["My favourite colour is green", "My favourite colour is teal", "My dog is called Bolt"]),
    );
    expect(mentioning(await everything(), [erin, ...mine.sessions]).length).toBeGreaterThan(10);
  }, 60_000);

  it("exports everything held about the caller, and nothing of another user", async () => {
    const res = await call("GET", "/api/me/export", erin);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const doc = res.body;
    expect(doc.user_id).toBe(erin);
    const sessions = new Map(doc.sessions.map((s: any) => [s.session_id, s]));
    for (const id of mine.sessions) expect(sessions.has(id)).toBe(true);
    const first: any = sessions.get(mine.sessions[0]);
    expect(first.settings).toMatchObject({ memory: true });
    expect(first.messages.map((m: any) => m.content)).toContain("my favourite colour is teal");
    expect(Object.keys(first.traces).length).toBeGreaterThan(0);
    expect(first.files).toEqual([
      expect.objectContaining({ file_id: mine.fileId, name: "trips.csv", status: "ready" }),
    ]);
    const link = await fetch(first.files[0].download_url);
    expect(await link.text()).toContain("lisbon");
    const streamed: any = sessions.get(mine.sessions[1]);
    expect(streamed.messages.map((m: any) => m.content)).toContain("Actually my favourite colour is green now");

    const teal = doc.memories.find((m: any) => /teal/.test(m.content));
    const green = doc.memories.find((m: any) => /green/.test(m.content));
    expect(teal.superseded_by).toBe(green.id);
    // The deleted memory is gone from the memories, and its mark (a hash and an embedding) is shown.
    expect(doc.memories.some((m: any) => /Mittens/.test(m.content))).toBe(false);
    expect(doc.forgotten_memories).toEqual([
      expect.objectContaining({ content_hash: expect.any(String), embedding: expect.any(Array) }),
    ]);
    expect(doc.store_items).toEqual(expect.arrayContaining([expect.objectContaining({ key: "pet" })]));
    expect(doc.agent_server.store_items).toEqual([
      expect.objectContaining({ namespace: ["notes"], key: "todo", value: { text: `call the vet for ${erin}` } }),
    ]);
    expect(doc.agent_server.assistants).toEqual([expect.objectContaining({ name: `${erin}'s helper` })]);
    expect(doc.agent_server.crons).toEqual([expect.objectContaining({ schedule: "0 9 * * 1" })]);
    expect(doc.agent_server.threads).toEqual([
      expect.objectContaining({
        thread_id: mine.threadId,
        status: "idle",
        runs: [
          expect.objectContaining({ run_id: expect.any(String), status: "success", kwargs: expect.any(Object) }),
          expect.objectContaining({ run_id: expect.any(String), status: "success", kwargs: expect.any(Object) }),
        ],
      }),
    ]);

    const text = JSON.stringify(doc);
    for (const needle of [finn, ...theirs.sessions]) expect(text).not.toContain(needle);
  });

  it("shows today's usage against the limits (none set: not counted)", async () => {
    const res = await call("GET", "/api/me/usage", erin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      day: new Date().toISOString().slice(0, 10),
      limits: { turns_per_minute: null, tokens_per_day: null },
      counted: false,
    });
  });

  it("refuses the admin route to a non-admin, and an admin's malformed id, before anything is erased", async () => {
    const stranger = await call("DELETE", `/api/admin/users/${encodeURIComponent(erin)}`, finn);
    expect(stranger.status).toBe(403);
    const blank = await call("DELETE", "/api/admin/users/%20", "root", undefined, { "x-user-role": "admin" });
    expect(blank.status).toBe(400);
    expect(mentioning(await everything(), [erin]).length).toBeGreaterThan(10);
  });

  it("erases everything held about the caller, in every store; another user's data stays", async () => {
    const before = mentioning(await everything(), [finn, ...theirs.sessions]);
    const res = await call("DELETE", "/api/me", erin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ erased: true, sessions: 3, assistants: 1, crons: 1, store_items: 1 });
    expect(mentioning(await everything(), [erin, ...mine.sessions])).toEqual([]);
    expect(mentioning(await everything(), [finn, ...theirs.sessions])).toEqual(before);
    expect((await call("GET", "/api/memories", finn)).body.memories.length).toBeGreaterThan(0);
    // Erasing again finds nothing and answers the same.
    expect((await call("DELETE", "/api/me", erin)).body).toMatchObject({ erased: true, sessions: 0 });
  }, 60_000);

  it("creates nothing from an extraction message delivered after the erasure", async () => {
    const late = (sessionId: string, user_message: string, turnAt?: string) =>
      stack().queues.extraction.publish({
        user_id: erin,
        project_id: null,
        session_id: sessionId,
        turn_id: crypto.randomUUID(),
        user_message,
        assistant_reply: "Noted.",
        ...(turnAt ? { turn_at: turnAt } : {}),
      });
    await late(mine.sessions[0]!, "I prefer aisle seats on short flights");
    // One that says when its turn began: before the erasure, so refused as well.
    await late(mine.sessions[1]!, "I prefer the front of the train", new Date(Date.now() - 60_000).toISOString());
    await stack().queues.extraction.drained();
    expect(stack().queues.extractionDeadLetters.depth).toBe(0);
    expect(mentioning(await everything(), [erin, ...mine.sessions])).toEqual([]);
    expect((await call("GET", "/api/memories", erin)).body).toEqual({ memories: [] });
  });

  it("lets an admin erase a user by id", async () => {
    const res = await call("DELETE", `/api/admin/users/${encodeURIComponent(finn)}`, "root", undefined, {
      "x-user-role": "admin",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ erased: true, sessions: 3, assistants: 1, crons: 1, store_items: 1 });
    expect(mentioning(await everything(), [finn, ...theirs.sessions])).toEqual([]);
  }, 60_000);
});
