import { PostgrestConversationStore } from "../../../shared/stores/postgrest-conversations";
import { supabaseRest } from "../../../shared/stores/postgrest";
import type { ConversationMessage } from "../../../shared/stores/conversations";
import { recordingServer, type RecordedRequest, type Reply } from "../../support/recording-server";
import { backendsHarness } from "../../support/stack";

const recorded = (sessionId: string, userId: string, id: string, text: string) => ({
  sessionId,
  userId,
  projectId: null,
  sessionName: `about ${text}`,
  turnId: id,
  messages: turn(id, text),
  trace: [{ type: "tool" as const, name: "recall_memory", started_at: 1, duration_ms: 2, success: true }],
});

const turn = (id: string, text: string): ConversationMessage[] => [
  { role: "user", content: text, created_at: "2026-01-01T00:00:00.000Z", message_id: `h-${id}` },
  { role: "assistant", content: `re: ${text}`, created_at: "2026-01-01T00:00:01.000Z", message_id: id },
];

describe("SQL conversation store on PGlite (the migration's own SQL)", () => {
  let harness: Awaited<ReturnType<typeof backendsHarness>>;
  beforeAll(async () => {
    harness = await backendsHarness();
  }, 60_000);
  afterAll(() => harness.close());

  it("appends turns in order, once each, for the session's owner only", async () => {
    const store = harness.conversations;
    expect(await store.recordTurn(recorded("s1", "alice", "a1", "one"))).toBe("appended");
    expect(await store.recordTurn(recorded("s1", "alice", "a2", "two"))).toBe("appended");
    expect(await store.recordTurn(recorded("s1", "alice", "a2", "two"))).toBe("duplicate");
    expect(await store.recordTurn(recorded("s1", "mallory", "m1", "mine now"))).toBe("forbidden");
    const saved = await store.get("s1");
    expect(saved?.userId).toBe("alice");
    expect(saved?.messages.map((m) => m.content)).toEqual(["one", "re: one", "two", "re: two"]);
    expect(await store.get("missing")).toBeUndefined();
  });

  it("keeps concurrent turns of one session, losing none", async () => {
    const store = harness.conversations;
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.recordTurn(recorded("s2", "bob", `t${i}`, `m${i}`))));
    expect((await store.get("s2"))?.messages).toHaveLength(20);
  });

  it("enables row level security with no policies on the table", async () => {
    const { rows } = await harness.postgres.query<{ relrowsecurity: boolean; policies: number }>(
      `select c.relrowsecurity, (select count(*)::int from pg_policies p where p.tablename = c.relname) as policies
         from pg_class c where c.relname = 'agent_conversations'`,
    );
    expect(rows[0]).toEqual({ relrowsecurity: true, policies: 0 });
  });
});

describe("PostgREST conversation store (Supabase's documented wire format)", () => {
  let reply: (req: RecordedRequest) => Reply = () => ({ status: 200, body: [] });
  let server: Awaited<ReturnType<typeof recordingServer>>;
  let store: PostgrestConversationStore;
  beforeAll(async () => {
    server = await recordingServer((req) => reply(req));
    store = new PostgrestConversationStore(supabaseRest(`${server.url}/`, "service-key"));
  });
  afterAll(() => server.close());
  const last = () => server.requests[server.requests.length - 1]!;

  it("calls the record_turn RPC with the service role", async () => {
    reply = () => ({ status: 200, body: "appended" });
    expect(await store.recordTurn(recorded("s1", "alice", "a1", "hi"))).toBe("appended");
    const req = last();
    expect([req.method, req.path]).toEqual(["POST", "/rest/v1/rpc/record_turn"]);
    expect(req.headers.apikey).toBe("service-key");
    expect(req.headers.authorization).toBe("Bearer service-key");
    expect(req.body).toEqual({
      p_session_id: "s1",
      p_user_id: "alice",
      p_project_id: null,
      p_session_name: "about hi",
      p_messages: turn("a1", "hi"),
      p_turn_id: "a1",
      p_trace: recorded("s1", "alice", "a1", "hi").trace,
    });
  });

  it("reads one row by session_id, and treats an empty result as no session", async () => {
    const row = {
      session_id: "s1",
      user_id: "alice",
      messages: turn("a1", "hi"),
      created_at: "2026-01-01T00:00:00+00:00",
      updated_at: "2026-01-01T00:00:01+00:00",
    };
    reply = (req) => ({ status: 200, body: req.query.get("session_id") === "eq.s1" ? [row] : [] });
    expect(await store.get("s1")).toEqual({
      sessionId: "s1",
      userId: "alice",
      messages: row.messages,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:01.000Z",
    });
    expect(last().path).toBe("/rest/v1/agent_conversations");
    expect(last().query.get("select")).toBe("session_id,user_id,messages,created_at,updated_at");
    expect(await store.get("nope")).toBeUndefined();
  });

  it("surfaces a PostgREST error instead of pretending the session is empty", async () => {
    reply = () => ({ status: 401, body: { code: "PGRST301", message: "JWT expired", details: null, hint: null } });
    await expect(store.get("s1")).rejects.toThrow(/JWT expired/);
    await expect(store.recordTurn(recorded("s1", "a", "t", "x"))).rejects.toThrow(/JWT expired/);
  });
});
