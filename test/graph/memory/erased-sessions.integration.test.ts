import { MemoryExtractor } from "../../../graph/memory/extractor";
import { loadConfig } from "../../../shared/config";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { RpcConversationStore } from "../../../shared/stores/rpc-conversations";
import { RpcUserData } from "../../../shared/stores/user-data";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { extractionHarness } from "../../support/extraction";

// The tombstones an erasure leaves (012_user_data.sql): a turn of an erased session stores no
// memory, whether the consumer sees the tombstone first (no model call) or the erasure lands while
// it runs (the database refuses the memory and the consumer drops the turn instead of retrying it).
let h: Awaited<ReturnType<typeof extractionHarness>>;
let userData: RpcUserData;
beforeAll(async () => {
  h = await extractionHarness();
  userData = new RpcUserData(sqlRpc(h.db));
}, 60_000);
afterAll(() => h.db.close());

const turn = (session: string, user = "ivy") => ({
  user_id: user,
  project_id: null,
  session_id: session,
  turn_id: crypto.randomUUID(),
  user_message: "I prefer aisle seats on short flights",
  assistant_reply: "Noted.",
});

const memoriesOf = async (user: string) =>
  (await h.db.query("select content from agent_memories where user_id = $1", [user])).rows;

describe("a deleted session", () => {
  // A probe's finding: the user deleted a session, then erased themselves; the session's
  // extraction message, still in flight, then stored a memory after the erasure had answered,
  // since the erasure could no longer find the session to tombstone it.
  it("keeps a turn's extraction still in flight from storing a memory, and so does the erasure after it", async () => {
    const session = crypto.randomUUID();
    const conversations = new RpcConversationStore(sqlRpc(h.db));
    const at = new Date().toISOString();
    await conversations.recordTurn({
      sessionId: session,
      userId: "lou",
      projectId: null,
      sessionName: "colours",
      turnId: "t1",
      messages: [
        { role: "user", content: "my favourite colour is purple", created_at: at, message_id: "h1" },
        { role: "assistant", content: "Noted.", created_at: at, message_id: "t1" },
      ],
      trace: [],
    });
    expect(await conversations.deleteSession(session, "lou")).toBe(true);
    await userData.erase("lou", []);
    expect(await h.extractor.process({ ...turn(session, "lou"), turn_at: at })).toMatchObject({ erased: true });
    expect(await memoriesOf("lou")).toEqual([]);
  });
});

describe("an erased user's sessions", () => {
  it("count as erased from the erasure's last pass: a turn made between its first pass and its last is refused", async () => {
    const session = crypto.randomUUID();
    await userData.erase("kim", [session]);
    // The first pass tombstoned the session an hour ago; a turn ran on it half an hour ago, before
    // the erasure reached it; the erasure's last pass runs now.
    await h.db.query(
      "update erased_sessions set erased_at = now() - interval '1 hour' where session_hash = erased_session_hash($1)",
      [session],
    );
    const between = new Date(Date.now() - 30 * 60_000).toISOString();
    expect(await userData.sessionErased(session, between)).toBe(false);
    await userData.erase("kim", [session]);
    expect(await userData.sessionErased(session, between)).toBe(true);
    expect(await h.extractor.process({ ...turn(session, "kim"), turn_at: between })).toMatchObject({ erased: true });
    expect(await memoriesOf("kim")).toEqual([]);
    // A turn of a thread made again under the id after the erasure is new data.
    const later = new Date(Date.now() + 10_000).toISOString();
    expect(await userData.sessionErased(session, later)).toBe(false);
  });

  it("store no memory from a turn whose erasure landed while it was extracted", async () => {
    const session = crypto.randomUUID();
    await userData.erase("ivy", [session]);
    // h.extractor does not ask for tombstones first: the database is all that stands in the way.
    expect(await h.extractor.process(turn(session))).toMatchObject({ added: 0, erased: true });
    expect(await memoriesOf("ivy")).toEqual([]);
  });

  it("are dropped before any model call when the consumer asks first", async () => {
    const session = crypto.randomUUID();
    await userData.erase("jay", [session]);
    const model = new OfflineChatModel({});
    const generate = vi.spyOn(model, "_generate");
    const extractor = new MemoryExtractor({
      model,
      store: h.store,
      embeddings: h.embeddings,
      duplicateThreshold: loadConfig({}).MEMORY_DUPLICATE_THRESHOLD,
      sessionErased: (id) => userData.sessionErased(id),
    });
    expect(await extractor.process(turn(session, "jay"))).toEqual({
      facts: 0,
      tokens: 0,
      added: 0,
      duplicates: 0,
      superseded: 0,
      forgotten: 0,
      erased: true,
    });
    expect(generate).not.toHaveBeenCalled();
    expect(await memoriesOf("jay")).toEqual([]);
    // The same extractor on a session not erased calls the model (the spy sees its calls).
    await extractor.process(turn(crypto.randomUUID(), "jay"));
    expect(generate).toHaveBeenCalled();
  });

  it("leave the user's new sessions, and everyone else's, alone", async () => {
    await userData.erase("kim", [crypto.randomUUID()]);
    expect(await h.extractor.process(turn(crypto.randomUUID(), "kim"))).toMatchObject({ added: 1 });
    expect(await h.extractor.process(turn(crypto.randomUUID(), "lou"))).toMatchObject({ added: 1 });
    expect(await memoriesOf("kim")).toHaveLength(1);
  });

  it("are named in the tombstones by a hash only", async () => {
    const session = crypto.randomUUID();
    await userData.erase("max", [session]);
    const rows = (await h.db.query<{ row: string }>("select t::text as row from erased_sessions t")).rows;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.row.includes(session) || r.row.includes("max"))).toBe(false);
    expect(await userData.sessionErased(session)).toBe(true);
    expect(await userData.sessionErased(crypto.randomUUID())).toBe(false);
  });
});
