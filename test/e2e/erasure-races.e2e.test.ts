import { randomUUID } from "node:crypto";
import { DeleteItemCommand } from "@aws-sdk/client-dynamodb";
import { OWNER_SORT_KEY } from "../../shared/stores/session-owners";
import { apiCaller } from "../support/api-call";
import { freshUser, localStackDynamo, localStackForTests } from "../support/local-stack";
import { rememberFact } from "../support/sdk";

// DELETE /api/me racing the user's own new work (a probe's finding): a session started while the
// erasure runs must not survive it half erased (its transcript and state kept, its memory gone and
// its id tombstoned). A stack of its own, with the offline model's default streaming pace, so a
// turn is still running while the erasure goes on.
const holder = localStackForTests("erasure-races");

const call = apiCaller(() => holder.stack.url);

describe("an erasure racing the user's new sessions", () => {
  it("erases a session a turn started after the erasure listed the user's sessions, once that turn ended", async () => {
    const user = freshUser("racer");
    // Sessions enough that the erasure is still going when the new turn claims its session.
    for (let i = 0; i < 6; i++)
      expect((await call("POST", "/api/chat", user, { message: `note ${i}` })).status).toBe(200);

    const erasure = call("DELETE", "/api/me", user);
    await new Promise((r) => setTimeout(r, 30));
    // About 3 s of streaming, in a new session.
    const turn = await fetch(`${holder.stack.url}/api/chat/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user-id": user },
      body: JSON.stringify({ message: rememberFact(20) }),
    });
    expect(turn.status).toBe(200);
    const [erased, streamed] = await Promise.all([erasure, turn.text()]);
    expect(erased.status).toBe(200);
    const sessionId = /"session_id":"([0-9a-f-]{36})"/.exec(streamed)![1]!;

    // Nothing of it is left: not its state, not its transcript, not in the export.
    expect((await call("GET", `/api/sessions/${sessionId}/messages`, user)).status).toBe(404);
    const exported = (await call("GET", "/api/me/export", user)).body;
    expect(exported.sessions).toEqual([]);
    expect(exported.memories).toEqual([]);
  }, 60_000);

  it("erases a thread a client makes again under its own id while the erasure runs, with what it answered before the erasure did", async () => {
    const user = freshUser("remaker");
    const threadId = randomUUID();
    for (let i = 0; i < 10; i++)
      expect((await call("POST", "/api/chat", user, { message: `note ${i}` })).status).toBe(200);
    expect((await call("POST", "/threads", user, { thread_id: threadId })).status).toBe(200);
    let done = false;
    const answeredBefore: string[] = [];
    const erasure = call("DELETE", "/api/me", user).then((res) => {
      done = true;
      return res;
    });
    // The client keeps making the thread again and running on it until the erasure answers.
    for (let k = 0; !done && k < 200; k++) {
      await call("POST", "/threads", user, { thread_id: threadId, if_exists: "do_nothing" });
      const marker = `SECRET-${k}-`;
      const ran = await call("POST", `/threads/${threadId}/runs/wait`, user, {
        assistant_id: "chat",
        input: { messages: [{ role: "user", content: marker }] },
      });
      if (ran.status === 200 && !done) answeredBefore.push(marker);
    }
    // 200, or 409 when the client kept making sessions through all its rounds: sent again once it stopped.
    const first = await erasure;
    expect([200, 409]).toContain(first.status);
    if (first.status === 409) expect((await call("DELETE", "/api/me", user)).status).toBe(200);
    const exported = JSON.stringify((await call("GET", "/api/me/export", user)).body);
    for (const marker of answeredBefore) expect(exported).not.toContain(marker);
  }, 60_000);

  it("keeps what a thread made again under an erased id remembers, and still refuses a late message of the erased turn", async () => {
    const user = freshUser("returner");
    const threadId = randomUUID();
    const run = async (content: string) =>
      (
        await call("POST", `/threads/${threadId}/runs/wait`, user, {
          assistant_id: "chat",
          input: { messages: [{ role: "user", content }] },
        })
      ).body as { messages: { content: string }[] };
    expect((await call("POST", "/threads", user, { thread_id: threadId })).status).toBe(200);
    await run("remember that my locker is number 12");
    const before = new Date().toISOString();
    expect((await call("DELETE", "/api/me", user)).status).toBe(200);
    // Past the margin the tombstone allows for the two clocks (014_tombstones_by_turn_time.sql).
    await new Promise((r) => setTimeout(r, 5_500));

    expect((await call("POST", "/threads", user, { thread_id: threadId })).status).toBe(200);
    const answer = await run("remember that my favourite fruit is mango");
    expect(answer.messages.at(-1)!.content).toMatch(/remember that my favourite fruit is mango/i);
    // A message of a turn of the erased thread, delivered late, still brings nothing back.
    await holder.stack.queues.extraction.publish({
      user_id: user,
      project_id: null,
      session_id: threadId,
      turn_id: randomUUID(),
      user_message: "my old locker code is 4321",
      assistant_reply: "Noted.",
      turn_at: before,
    });
    await holder.stack.queues.extraction.drained();
    const memories = (await call("GET", "/api/memories", user)).body as { memories: { content: string }[] };
    expect(memories.memories.map((m) => m.content).join(" ")).toMatch(/mango/);
    expect(JSON.stringify(memories)).not.toMatch(/locker/);
  }, 60_000);
});

describe("an erasure and a thread id another user holds now", () => {
  it("takes only the erased user's own traces of it, never the other user's thread", async () => {
    const ann = freshUser("ann");
    const bob = freshUser("bob");
    const threadId = randomUUID();
    expect((await call("POST", "/threads", ann, { thread_id: threadId })).status).toBe(200);
    const annsRun = await call("POST", `/threads/${threadId}/runs/wait`, ann, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "hello from ann" }] },
    });
    expect(annsRun.status).toBe(200);
    // Ann's session record expired (DynamoDB's TTL) while her thread list still names the id, and
    // Bob made a thread under it since.
    const { client, table } = localStackDynamo(holder.stack);
    await client.send(
      new DeleteItemCommand({ TableName: table, Key: { pk: { S: threadId }, sk: { S: OWNER_SORT_KEY } } }),
    );
    expect((await call("POST", "/threads", bob, { thread_id: threadId })).status).toBe(200);
    // (Bob's run ends in error while Ann's transcript holds the id in Supabase; it is on record.)
    await call("POST", `/threads/${threadId}/runs/wait`, bob, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "hello from bob" }] },
      metadata: { note: "bob's own" },
    });
    // Ann's export shows her runs of the id, never Bob's (a probe found his metadata and input in it).
    const exported = (await call("GET", "/api/me/export", ann)).body as {
      agent_server: { threads: { thread_id: string }[] };
    };
    expect(exported.agent_server.threads.map((t) => t.thread_id)).toEqual([threadId]);
    expect(JSON.stringify(exported)).not.toMatch(/bob.s own|hello from bob/);

    expect((await call("DELETE", "/api/me", ann)).status).toBe(200);
    expect((await call("GET", `/threads/${threadId}`, bob)).status).toBe(200);
    expect((await call("GET", `/threads/${threadId}/state`, bob)).status).toBe(200);
    expect((await call("GET", `/threads/${threadId}`, ann)).status).toBe(404);
    // Ann's run record (her input in it) went with her; Bob's stays.
    const runs = (await call("GET", `/threads/${threadId}/runs`, bob)).body as { metadata: unknown }[];
    expect(runs).toHaveLength(1);
  }, 60_000);

  it("starts a thread made under an id whose session's records expired with nothing of that session in it", async () => {
    const ann = freshUser("ann");
    const bob = freshUser("bob");
    const threadId = randomUUID();
    expect((await call("POST", "/threads", ann, { thread_id: threadId })).status).toBe(200);
    await call("POST", `/threads/${threadId}/runs/wait`, ann, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "ann's private note" }] },
    });
    // DynamoDB's TTL took Ann's session record first; her checkpoints and run are still there.
    const { client, table } = localStackDynamo(holder.stack);
    await client.send(
      new DeleteItemCommand({ TableName: table, Key: { pk: { S: threadId }, sk: { S: OWNER_SORT_KEY } } }),
    );
    expect((await call("POST", "/threads", bob, { thread_id: threadId })).status).toBe(200);
    const state = await call("GET", `/threads/${threadId}/state`, bob);
    expect(JSON.stringify(state.body)).not.toContain("ann's private note");
    expect((await call("GET", `/threads/${threadId}/runs`, bob)).body).toEqual([]);
  }, 60_000);

  it("shows nobody else's transcript or settings through the sessions routes once the owner record expired", async () => {
    const ann = freshUser("ann");
    const bob = freshUser("bob");
    const chat = await call("POST", "/api/chat", ann, { message: "ann's diary entry" });
    const sessionId = (chat.body as { session_id: string }).session_id;
    const { client, table } = localStackDynamo(holder.stack);
    await client.send(
      new DeleteItemCommand({ TableName: table, Key: { pk: { S: sessionId }, sk: { S: OWNER_SORT_KEY } } }),
    );
    expect((await call("POST", "/threads", bob, { thread_id: sessionId })).status).toBe(200);
    expect(
      (
        await call("PATCH", `/api/sessions/${sessionId}`, bob, {
          settings: { private: true },
          approve_tools: ["bob_tool"],
        })
      ).status,
    ).toBe(200);
    // Bob holds the owner record now; the transcript is still Ann's.
    const read = await call("GET", `/api/sessions/${sessionId}/messages?trace=1`, bob);
    expect(read.status).toBe(404);
    expect(JSON.stringify(read.body)).not.toContain("diary");
    // Ann's list names her session, with nothing of Bob's settings on it.
    const listed = (await call("GET", "/api/sessions", ann)).body as {
      sessions: { session_id: string; private: boolean; approve_tools: unknown }[];
    };
    const mine = listed.sessions.find((s) => s.session_id === sessionId)!;
    expect(mine).toMatchObject({ private: false, approve_tools: [] });
  }, 60_000);
});
