import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { signIntercom } from "../../shared/intercom/signature";

// The README's curl session, over HTTP, against the stack `npm start` runs.
const dataDir = mkdtempSync(join(tmpdir(), "agent-e2e-"));
let stack: LocalStack;
const env = { DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT" };

beforeAll(async () => {
  stack = await startLocalStack(env);
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.url}${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  return { status: res.status, body: (await res.json()) as any };
}
const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${stack.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as any };
};

/** Polls until `check` passes: the drop folder and its queue work asynchronously, as S3 and SQS do. */
async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("local stack over HTTP", () => {
  let sessionId: string;

  it("is healthy once booted and names its stand-ins", async () => {
    expect((await get("/health")).status).toBe(200);
    expect(stack.describe.join("\n")).toMatch(/model: offline rule-based stand-in/);
  });

  it("chats across two turns and returns the history in order", async () => {
    const first = await post("/api/chat", JSON.stringify({ message: "hi" }));
    expect(first.status).toBe(200);
    expect(first.body.reply).toBe("Hello! How can I help you today?");
    sessionId = first.body.session_id;

    const second = await post("/api/chat", JSON.stringify({ message: "I like hiking", session_id: sessionId }));
    expect(second.status).toBe(200);
    expect(second.body.session_id).toBe(sessionId);

    const history = await get(`/api/sessions/${sessionId}/messages`);
    expect(history.status).toBe(200);
    expect(history.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "Hello! How can I help you today?"],
      ["user", "I like hiking"],
      ["assistant", second.body.reply],
    ]);
  });

  it("answers each bad input with its 400 and keeps serving", async () => {
    const bad = [
      ["{oops", "invalid_json"],
      [JSON.stringify({}), "invalid_message"],
      [JSON.stringify({ message: "" }), "invalid_message"],
      [JSON.stringify({ message: 1 }), "invalid_message"],
      [JSON.stringify({ message: "x".repeat(16 * 1024 + 1) }), "message_too_large"],
      [JSON.stringify({ message: "hi", session_id: "123" }), "invalid_session_id"],
    ];
    for (const [body, code] of bad) {
      const res = await post("/api/chat", body!);
      expect([res.status, res.body.error.code]).toEqual([400, code]);
    }
    expect((await post("/api/chat", JSON.stringify({ message: "still here?" }))).status).toBe(200);
  });

  it("hides a session from another user", async () => {
    const res = await post("/api/chat", JSON.stringify({ message: "hi", session_id: sessionId }), {
      "x-user-id": "eve",
    });
    expect(res.status).toBe(404);
    expect((await get(`/api/sessions/${sessionId}/messages`, { "x-user-id": "eve" })).status).toBe(404);
  });

  it("remembers a fact for its user across sessions, and only for them", async () => {
    const u1 = { "x-user-id": "u1" };
    const turnAt = new Date().toISOString();
    const told = await post("/api/chat", JSON.stringify({ message: "remember that my favourite colour is teal" }), u1);
    expect(told.body.reply).toMatch(/remember that my favourite colour is teal/);
    const asked = await post("/api/chat", JSON.stringify({ message: "what is my favourite colour?" }), u1);
    expect(asked.body.session_id).not.toBe(told.body.session_id);
    expect(asked.body.reply).toContain("teal");
    const other = await post("/api/chat", JSON.stringify({ message: "what is my favourite colour?", user_id: "u2" }));
    expect(other.status).toBe(200);
    expect(other.body.reply).not.toContain("teal");
    await stack.queues.extraction.drained(); // extraction of these turns must not race the delete below

    const listed = await get("/api/memories", u1);
    expect(listed.body.memories.map((m: { content: string }) => m.content)).toEqual(["my favourite colour is teal"]);
    expect((await get("/api/memories", { "x-user-id": "u2" })).body).toEqual({ memories: [] });
    const id = listed.body.memories[0].id;
    const stranger = await fetch(`${stack.url}/api/memories/${id}`, {
      method: "DELETE",
      headers: { "x-user-id": "u2" },
    });
    expect(stranger.status).toBe(404);
    const owner = await fetch(`${stack.url}/api/memories/${id}`, { method: "DELETE", headers: u1 });
    expect(owner.status).toBe(204);
    expect((await get("/api/memories", u1)).body).toEqual({ memories: [] });
    // An extraction message of that turn still in flight (one the consumer has not seen: a new turn_id,
    // as its own was consumed above) stores nothing the user deleted since the turn began.
    await stack.queues.extraction.publish({
      user_id: "u1",
      project_id: null,
      session_id: told.body.session_id,
      turn_id: crypto.randomUUID(),
      user_message: "remember that my favourite colour is teal",
      assistant_reply: told.body.reply,
      turn_at: turnAt,
    });
    await stack.queues.extraction.drained();
    expect((await get("/api/memories", u1)).body).toEqual({ memories: [] });
  });

  it("learns facts from ordinary messages after the reply, once each, and lets a new value replace an old one", async () => {
    const u3 = { "x-user-id": "u3" };
    const said = await post("/api/chat", JSON.stringify({ message: "I prefer window seats on long flights" }), u3);
    expect(said.status).toBe(200);
    await stack.queues.extraction.drained();
    const memories = async () =>
      (await get("/api/memories", u3)).body.memories.map((m: { content: string }) => m.content);
    expect(await memories()).toEqual(["I prefer window seats on long flights"]);

    const asked = await post("/api/chat", JSON.stringify({ message: "what seat do I like?" }), u3);
    expect(asked.body.reply).toContain("window seats");

    await post("/api/chat", JSON.stringify({ message: "I prefer window seats on long flights." }), u3);
    await stack.queues.extraction.drained();
    expect(await memories()).toEqual(["I prefer window seats on long flights"]);

    await post("/api/chat", JSON.stringify({ message: "my favourite colour is teal" }), u3);
    await stack.queues.extraction.drained();
    await post("/api/chat", JSON.stringify({ message: "Actually my favourite colour is green now" }), u3);
    await stack.queues.extraction.drained();
    expect(await memories()).toEqual(["My favourite colour is green", "I prefer window seats on long flights"]);
    expect(stack.queues.extractionDeadLetters.depth).toBe(0);
    // The replaced fact is kept, and listed on request with what replaced it.
    const all = (await get("/api/memories?superseded=1", u3)).body.memories as {
      id: string;
      content: string;
      superseded_by?: string;
    }[];
    const green = all.find((m) => m.content === "My favourite colour is green")!;
    expect(all.find((m) => /teal/.test(m.content))).toMatchObject({ superseded_by: green.id });
    expect(green.superseded_by).toBeUndefined();
    expect((await get("/api/memories?superseded=yes", u3)).status).toBe(400);
  });

  it("answers from the sample knowledge base on first start, citing the source", async () => {
    await waitFor(async () =>
      (await post("/api/chat", JSON.stringify({ message: "how much does the Pro plan cost?" }))).body.reply.includes(
        "(pricing.md)",
      ),
    );
  });

  it("ingests a dropped file, follows its edits and forgets it when deleted", async () => {
    const file = join(stack.dropDir, "red flower.md");
    const ask = async () =>
      (await post("/api/chat", JSON.stringify({ message: "where does the crimson zanthorian flower grow?" }))).body
        .reply as string;
    writeFileSync(file, "The crimson zanthorian flower grows only on the cliffs of Veloria.\n");
    await waitFor(async () => (await ask()).includes("cliffs of Veloria"));
    expect(await ask()).toContain("(red flower.md)");
    writeFileSync(file, "The crimson zanthorian flower now grows in the marshes of Quell.\n");
    await waitFor(async () => (await ask()).includes("marshes of Quell"));
    expect(await ask()).not.toContain("Veloria");
    unlinkSync(file);
    await waitFor(async () => !(await ask()).includes("zanthorian"));
    expect(stack.queues.ingestDeadLetters.depth).toBe(0);
  }, 30_000);

  it("streams a reply as server-sent events and saves the same history /api/chat would", async () => {
    const res = await fetch(`${stack.url}/api/chat/stream`, {
      method: "POST",
      body: JSON.stringify({ message: "I had a long and lovely walk by the river today" }),
      headers: { "x-user-id": "streamer" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events: { type: string; at: number; [k: string]: unknown }[] = [];
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let i: number; (i = buffer.indexOf("\n\n")) >= 0; buffer = buffer.slice(i + 2)) {
        events.push({ ...JSON.parse(buffer.slice(0, i).replace(/^data: /, "")), at: Date.now() });
      }
    }
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("session");
    expect(types.at(-1)).toBe("done");
    const tokens = events.filter((e) => e.type === "token");
    expect(tokens.length).toBeGreaterThan(5);
    expect(tokens.at(-1)!.at - tokens[0]!.at).toBeGreaterThan(50); // arrived over time, not in one burst
    expect(types).toContain("session_name");
    const done = events.at(-1)!;
    expect(tokens.map((t) => t.text).join("")).toBe(done.reply);
    const sessionId = events[0]!.session_id as string;
    const history = await get(`/api/sessions/${sessionId}/messages`, { "x-user-id": "streamer" });
    expect(history.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "I had a long and lovely walk by the river today"],
      ["assistant", done.reply],
    ]);
    const sessions = await get("/api/sessions", { "x-user-id": "streamer" });
    expect(sessions.body.sessions).toEqual([
      expect.objectContaining({ session_id: sessionId, name: "I had a long and", message_count: 2 }),
    ]);
  });

  it("shows the tool calls of a memory question in the history's trace", async () => {
    const asked = await post("/api/chat", JSON.stringify({ message: "what do you remember about me?" }), {
      "x-user-id": "tracer",
    });
    const history = await get(`/api/sessions/${asked.body.session_id}/messages?trace=1`, { "x-user-id": "tracer" });
    const trace = history.body[1].trace as {
      type: string;
      name: string;
      args?: unknown;
      success?: boolean;
      duration_ms: number;
    }[];
    expect(trace.filter((s) => s.type === "tool")).toEqual([
      expect.objectContaining({
        name: "recall_memory",
        args: { query: "what do you remember about me?" },
        success: true,
      }),
      expect.objectContaining({ name: "search_knowledge_base", success: true }),
    ]);
    expect(trace.filter((s) => s.type === "model")).toHaveLength(2);
    expect(trace.every((s) => typeof s.duration_ms === "number")).toBe(true);
    expect(history.body[0].trace).toBeUndefined();
  });

  it("finishes and saves a turn whose client disconnected mid-stream, and frees the session", async () => {
    const first = await post("/api/chat", JSON.stringify({ message: "hi" }), { "x-user-id": "leaver" });
    const sessionId = first.body.session_id;
    const controller = new AbortController();
    const res = await fetch(`${stack.url}/api/chat/stream`, {
      method: "POST",
      body: JSON.stringify({
        message: "tell me something long about rivers and lakes and mountains",
        session_id: sessionId,
      }),
      headers: { "x-user-id": "leaver" },
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the session event, then leave
    controller.abort();
    await waitFor(
      async () => (await get(`/api/sessions/${sessionId}/messages`, { "x-user-id": "leaver" })).body.length === 4,
    );
    const next = await post("/api/chat", JSON.stringify({ message: "still there?", session_id: sessionId }), {
      "x-user-id": "leaver",
    });
    expect(next.status).toBe(200);
    expect((await get(`/api/sessions/${sessionId}/messages`, { "x-user-id": "leaver" })).body).toHaveLength(6);
  });

  it("answers a signed Intercom conversation from the knowledge base, escalates what nothing covers, and answers once", async () => {
    const createConversation = async (body: string) =>
      (await (
        await fetch(`${stack.url}/_local/intercom/conversations`, {
          method: "POST",
          body: JSON.stringify({ email: "ann@example.com", body }),
        })
      ).json()) as {
        conversation_id: string;
        part_id: string;
      };
    const notify = async (id: string, c: { conversation_id: string; part_id: string }) => {
      const body = JSON.stringify({
        type: "notification_event",
        id,
        topic: "conversation.user.created",
        data: {
          item: {
            type: "conversation",
            id: c.conversation_id,
            source: { id: c.part_id, author: { type: "user", id: "u1" } },
          },
        },
      });
      const started = Date.now();
      const res = await fetch(`${stack.url}/webhooks/intercom`, {
        method: "POST",
        body,
        headers: { "X-Hub-Signature": signIntercom(body, "local-dev-secret") },
      });
      return { status: res.status, ms: Date.now() - started };
    };
    const actions = async (conversationId: string) =>
      (
        (await (await fetch(`${stack.url}/_local/intercom/actions`)).json()) as {
          conversation_id: string;
          kind: string;
          body: string;
        }[]
      ).filter((a) => a.conversation_id === conversationId);

    const covered = await createConversation("How much does the Pro plan cost?");
    const first = await notify("e2e-n1", covered);
    expect(first.status).toBe(200);
    expect(first.ms).toBeLessThan(500);
    await waitFor(async () => (await actions(covered.conversation_id)).some((a) => a.kind === "snooze"));
    const done = await actions(covered.conversation_id);
    expect(done.map((a) => a.kind)).toEqual(["note", "reply", "snooze"]);
    expect(done[1]!.body).toContain("(Source: pricing.md)");
    expect(done[0]!.body).toMatch(/^Validation passed/);

    expect((await notify("e2e-n1", covered)).status).toBe(200); // Intercom's retry of the same notification
    expect((await notify("e2e-n1b", covered)).status).toBe(200); // a new notification for the same part
    await stack.queues.support.drained();
    expect((await actions(covered.conversation_id)).filter((a) => a.kind === "reply")).toHaveLength(1);

    const uncovered = await createConversation("Can I pay with bitcoin or another cryptocurrency?");
    await notify("e2e-n2", uncovered);
    await waitFor(async () => (await actions(uncovered.conversation_id)).some((a) => a.kind === "note"));
    await stack.queues.support.drained();
    // Handed to the team and left open: a snooze would hide it from the team's inbox.
    const escalated = await actions(uncovered.conversation_id);
    expect(escalated.map((a) => a.kind)).toEqual(["note"]);
    expect(escalated[0]!.body).toMatch(/^Escalated to the team.*after 2 hops/);

    const bad = await fetch(`${stack.url}/webhooks/intercom`, {
      method: "POST",
      body: "{}",
      headers: { "X-Hub-Signature": `sha1=${"0".repeat(40)}` },
    });
    expect(bad.status).toBe(401);
    expect(stack.queues.supportDeadLetters.depth).toBe(0);
  }, 30_000);

  it("keeps sessions across a restart", async () => {
    await stack.close();
    stack = await startLocalStack(env);
    const history = await get(`/api/sessions/${sessionId}/messages`);
    expect(history.body).toHaveLength(4);
    const next = await post("/api/chat", JSON.stringify({ message: "back again", session_id: sessionId }));
    expect(next.status).toBe(200);
    expect((await get(`/api/sessions/${sessionId}/messages`)).body).toHaveLength(6);
  }, 60_000);

  it("runs a second instance beside the first on another port and data dir", async () => {
    const otherDir = mkdtempSync(join(tmpdir(), "agent-e2e-2-"));
    const other = await startLocalStack({ DATA_DIR: otherDir, PORT: "0" });
    let half: Socket | undefined;
    try {
      expect(other.url).not.toBe(stack.url);
      const res = await fetch(`${other.url}/api/sessions/${sessionId}/messages`);
      expect(res.status).toBe(404);
      // A client halfway through sending a request does not hold the stack's close.
      const { hostname, port } = new URL(other.url);
      half = connect(Number(port), hostname).on("error", () => {});
      await new Promise((r) => half!.once("connect", r));
      await new Promise((r) => half!.write("POST /api/chat HTTP/1.1\r\nHost: local\r\n", r));
    } finally {
      const closed = await Promise.race([
        other.close().then(() => "closed"),
        new Promise((r) => setTimeout(() => r("still open"), 5_000)),
      ]);
      half?.destroy();
      rmSync(otherDir, { recursive: true, force: true });
      expect(closed).toBe("closed");
    }
  }, 60_000);
});
