import { randomUUID } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { InvalidCursor, type ConversationMessage } from "../../../shared/stores/conversations";
import type { Rpc } from "../../../shared/stores/rpc";
import { CONVERSATION_STORE_CALLS, RpcConversationStore } from "../../../shared/stores/rpc-conversations";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { postgrestOver } from "../../support/postgrest-stand-in";
import { heldToTable } from "../../support/rpc-signatures";

const trace = [{ type: "tool" as const, name: "recall_memory", started_at: 1, duration_ms: 2, success: true }];

const recorded = (sessionId: string, userId: string, id: string, text: string, projectId: string | null = null) => ({
  sessionId,
  userId,
  projectId,
  sessionName: `about ${text}`,
  turnId: id,
  messages: turn(id, text),
  trace,
});

const turn = (id: string, text: string): ConversationMessage[] => [
  {
    role: "user",
    content: text,
    created_at: "2026-01-01T00:00:00.000Z",
    message_id: `h-${id}`,
    attachments: [{ file_id: "f1", name: 'cat "1".png', media_type: "image/png" }],
  },
  { role: "assistant", content: `re: ${text}`, created_at: "2026-01-01T00:00:01.000Z", message_id: id },
];

// The conversation store over each transport: SQL as the local stack runs it, and PostgREST
// (the real postgrest-js client) against the stand-in, both on PGlite with the migrations.
const transports: [string, (db: PGlite) => Rpc][] = [
  ["SQL on PGlite", sqlRpc],
  ["PostgREST (stand-in on PGlite)", postgrestOver],
];

describe.each(transports)("conversation store over %s", (_name, transport) => {
  let db: PGlite;
  let store: RpcConversationStore;
  beforeAll(async () => {
    db = await startLocalPostgres();
    store = new RpcConversationStore(heldToTable(transport(db), CONVERSATION_STORE_CALLS));
  }, 60_000);
  afterAll(() => db.close());

  it("appends turns in order, once each, for the session's owner only", async () => {
    expect(await store.recordTurn(recorded("s1", "alice", "a1", "one"))).toBe("appended");
    expect(await store.recordTurn(recorded("s1", "alice", "a2", 'two 🦆 "quoted" \\ back'))).toBe("appended");
    expect(await store.recordTurn(recorded("s1", "alice", "a2", "two"))).toBe("duplicate");
    expect(await store.recordTurn(recorded("s1", "mallory", "m1", "mine now"))).toBe("forbidden");
    const saved = await store.get("s1");
    expect(saved).toMatchObject({ sessionId: "s1", userId: "alice" });
    expect(saved?.messages).toEqual([...turn("a1", "one"), ...turn("a2", 'two 🦆 "quoted" \\ back')]);
    expect(saved?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await store.get("missing")).toBeUndefined();
  });

  it("keeps concurrent turns of one session, losing none", async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.recordTurn(recorded("s2", "bob", `t${i}`, `m${i}`))));
    expect((await store.get("s2"))?.messages).toHaveLength(20);
  });

  it("keeps each assistant message's trace, and none for a turn recorded without one", async () => {
    await store.recordTurn({ ...recorded("s3", "carol", "c2", "untraced"), trace: null });
    await store.recordTurn(recorded("s3", "carol", "c1", "traced"));
    expect(await store.traces("s3")).toEqual({ c1: trace });
    expect(await store.traces("nothing")).toEqual({});
  });

  // One row per answer: PostgREST answers at most max_rows (1,000 on Supabase) and says nothing of the rest.
  it("reads every trace of a session longer than PostgREST answers in one request", async () => {
    await db.query(
      `insert into execution_traces (message_id, session_id, user_id, steps)
       select 'long-' || i, 'long', 'dana', '[]'::jsonb from generate_series(1, 1001) as i`,
    );
    expect(Object.keys(await store.traces("long"))).toHaveLength(1_001);
  });

  it("pages a user's sessions newest first, and refuses a cursor it did not issue", async () => {
    // Session ids are UUIDs: a cursor names one, and only a UUID is taken back.
    const [p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, s] of [p1, p2, p3].entries())
      await store.recordTurn(recorded(s, "dan", `t${i}`, `p${i + 1}`, "apollo"));
    // Turns a millisecond apart list by time, not by id: spread them out as a day of chats would.
    await db.query(
      "update agent_sessions set updated_at = now() - (array_position($1::text[], session_id) * interval '1 hour') where user_id = 'dan'",
      [[p3, p2, p1]],
    );
    const first = await store.listSessions("dan", { limit: 2 });
    expect(first.sessions.map((s) => s.session_id)).toEqual([p3, p2]);
    expect(first.sessions[0]).toMatchObject({ project_id: "apollo", name: "about p3", message_count: 2 });
    const second = await store.listSessions("dan", { limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({ sessions: [expect.objectContaining({ session_id: p1 })] });
    expect((await store.listSessions("nobody", { limit: 5 })).sessions).toEqual([]);
    await expect(store.listSessions("dan", { limit: 2, cursor: "bm90LWEtY3Vyc29y" })).rejects.toBeInstanceOf(
      InvalidCursor,
    );
  });

  // The route's largest page: the extra row that says a next page exists must still be read.
  it("pages past the largest page size (100)", async () => {
    for (let i = 0; i < 102; i++) await store.recordTurn(recorded(randomUUID(), "pager", `m${i}`, "hi"));
    const first = await store.listSessions("pager", { limit: 100 });
    expect(first.sessions).toHaveLength(100);
    expect(first.nextCursor).toBeDefined();
    const second = await store.listSessions("pager", { limit: 100, cursor: first.nextCursor! });
    expect(second.sessions).toHaveLength(2);
    expect(second.nextCursor).toBeUndefined();
  }, 60_000);

  it("deletes a session with its history and traces, for its owner only", async () => {
    await store.recordTurn(recorded("s4", "erin", "e1", "bye"));
    expect(await store.deleteSession("s4", "mallory")).toBe(false);
    expect(await store.get("s4")).toBeDefined();
    expect(await store.deleteSession("s4", "erin")).toBe(true);
    expect(await store.get("s4")).toBeUndefined();
    expect(await store.traces("s4")).toEqual({});
    expect(await store.deleteSession("s4", "erin")).toBe(false);
  });

  it("says which function failed when the database refuses a value", async () => {
    await expect(store.recordTurn(recorded("s5", "gus", "g1", "nul \u0000 inside"))).rejects.toThrow(
      /^record_turn failed: /,
    );
  });
});

describe("conversation tables", () => {
  it("enable row level security with no policies", async () => {
    const db = await startLocalPostgres();
    try {
      const { rows } = await db.query<{ relname: string; relrowsecurity: boolean; policies: number }>(
        `select c.relname, c.relrowsecurity,
                (select count(*)::int from pg_policies p where p.tablename = c.relname) as policies
           from pg_class c where c.relname in ('agent_conversations', 'agent_sessions', 'execution_traces')
          order by c.relname`,
      );
      expect(rows).toEqual([
        { relname: "agent_conversations", relrowsecurity: true, policies: 0 },
        { relname: "agent_sessions", relrowsecurity: true, policies: 0 },
        { relname: "execution_traces", relrowsecurity: true, policies: 0 },
      ]);
    } finally {
      await db.close();
    }
  });
});
