import { vi } from "vitest";
import { freshUser, sharedLocalStack } from "../support/local-stack";

// Per-session tool settings and private sessions, over HTTP on the local stack (offline stand-in
// model, hashing embedder): what reaches memory, the queue and the trace.
const local = sharedLocalStack();
const [ann, bea, cy, dan] = [freshUser("ann"), freshUser("bea"), freshUser("cy"), freshUser("dan")] as const;
let queued: string[];

beforeAll(() => {
  queued = [];
  const send = local.stack.queues.extraction.send.bind(local.stack.queues.extraction);
  vi.spyOn(local.stack.queues.extraction, "send").mockImplementation((body: string) => {
    queued.push(body);
    return send(body);
  });
});
// The stack outlives this file (it is the worker's): its queue goes back to itself.
afterAll(() => vi.restoreAllMocks());

async function call(method: string, path: string, user: string, body?: unknown) {
  const res = await fetch(`${local.stack.url}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-user-id": user },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const chat = (user: string, body: Record<string, unknown>) => call("POST", "/api/chat", user, body);
const memories = async (user: string) =>
  (await call("GET", "/api/memories", user)).body.memories.map((m: { content: string }) => m.content);
const queuedFor = (sessionId: string) => queued.filter((b) => JSON.parse(b).session_id === sessionId);

describe("session settings", () => {
  it("with memory off stores nothing, offers no memory tool, and records the settings in the trace", async () => {
    const first = await chat(ann, {
      message: "Remember that my favourite colour is teal",
      settings: { memory: false },
    });
    expect(first.status).toBe(200);
    const sessionId = first.body.session_id;
    await local.stack.queues.extraction.drained();
    expect(await memories(ann)).toEqual([]);
    expect(queuedFor(sessionId)).toEqual([]);

    const history = await call("GET", `/api/sessions/${sessionId}/messages?trace=1`, ann);
    const trace = history.body[1].trace as { type: string; name: string; settings?: Record<string, boolean> }[];
    expect(trace.filter((s) => s.type === "tool").map((s) => s.name)).not.toContain("store_memory");
    expect(trace.find((s) => s.type === "settings")?.settings).toMatchObject({ memory: false, private: false });

    const listed = await call("GET", "/api/sessions", ann);
    expect(listed.body.sessions[0]).toMatchObject({
      session_id: sessionId,
      private: false,
      settings: { memory: false, knowledge: true, user_context: true, files: true, private: false },
    });

    // Turned on: the next turn stores.
    const patched = await call("PATCH", `/api/sessions/${sessionId}`, ann, { settings: { memory: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({ memory: true });
    const again = await chat(ann, { message: "Remember that my favourite colour is teal", session_id: sessionId });
    expect(again.status).toBe(200);
    await local.stack.queues.extraction.drained();
    expect(await memories(ann)).toContain("my favourite colour is teal");
    const trace2 = (await call("GET", `/api/sessions/${sessionId}/messages?trace=1`, ann)).body[3].trace;
    expect(trace2.filter((s: { type: string }) => s.type === "tool").map((s: { name: string }) => s.name)).toContain(
      "store_memory",
    );
  });

  it("keeps a private session out of memory, even through the extraction queue, while a normal one learns", async () => {
    const secret = await chat(bea, { message: "I prefer window seats", settings: { private: true } });
    expect(secret.status).toBe(200);
    await local.stack.queues.extraction.drained();
    expect(queuedFor(secret.body.session_id)).toEqual([]);
    expect(await memories(bea)).toEqual([]);
    const listed = await call("GET", "/api/sessions", bea);
    expect(listed.body.sessions[0]).toMatchObject({ session_id: secret.body.session_id, private: true });

    // Asked to remember in private: the stand-in's store_memory is not offered, so nothing is stored.
    const told = await chat(bea, { message: "remember that I like tea", session_id: secret.body.session_id });
    expect(told.status).toBe(200);
    await local.stack.queues.extraction.drained();
    expect(await memories(bea)).toEqual([]);

    const normal = await chat(bea, { message: "I prefer window seats" });
    expect(normal.status).toBe(200);
    await local.stack.queues.extraction.drained();
    expect(queuedFor(normal.body.session_id)).toHaveLength(1);
    expect(await memories(bea)).toEqual(["I prefer window seats"]);

    // Memory stays readable in private.
    const asked = await chat(bea, { message: "what seat do I like?", settings: { private: true } });
    expect(asked.body.reply).toContain("window seats");
  });

  it("answers bad settings with a 400 naming the problem, and another user's session with 404", async () => {
    const bad: [unknown, string][] = [
      [{ message: "hi", settings: { memmory: false } }, "invalid_settings"],
      [{ message: "hi", settings: { memory: "no" } }, "invalid_settings_memory"],
      [{ message: "hi", settings: [] }, "invalid_settings"],
      [{ message: "hi", settings: null }, "invalid_settings"],
    ];
    for (const [body, code] of bad) {
      const res = await chat(cy, body as Record<string, unknown>);
      expect([res.status, res.body.error.code]).toEqual([400, code]);
    }
    const started = await chat(cy, { message: "hi" });
    const onExisting = await chat(cy, {
      message: "hi",
      session_id: started.body.session_id,
      settings: { memory: false },
    });
    expect([onExisting.status, onExisting.body.error.code]).toEqual([400, "settings_on_existing_session"]);

    const path = `/api/sessions/${started.body.session_id}`;
    expect((await call("PATCH", path, dan, { settings: { memory: false } })).status).toBe(404);
    for (const body of ["{oops", {}, { settings: { memory: 1 } }, { settings: { memory: false }, extra: 1 }]) {
      expect((await call("PATCH", path, cy, body)).status).toBe(400);
    }
    expect((await call("PATCH", "/api/sessions/not-a-uuid", cy, { settings: {} })).status).toBe(400);
    // Nothing of the refused requests changed the session.
    expect((await call("GET", "/api/sessions", cy)).body.sessions[0].settings.memory).toBe(true);
  });
});
