import { RpcUserData } from "../../../shared/stores/user-data";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import { storeMemory } from "../../../graph/tools/memory-store";
import { extractionHarness } from "../../support/extraction";

// A memory the user deleted is not stored again by a turn from before the deletion: an extraction
// message still in flight, or one redelivered (021_forgotten_memories.sql). A probe's finding: the
// turn's own extraction, run after DELETE /api/memories/{id} had answered 204, put it back.
let h: Awaited<ReturnType<typeof extractionHarness>>;
beforeAll(async () => {
  h = await extractionHarness();
}, 60_000);
afterAll(() => h.db.close());

const turn = (user: string, turnAt: string, message = "My bank pin is 4321") => ({
  user_id: user,
  project_id: null,
  session_id: crypto.randomUUID(),
  turn_id: crypto.randomUUID(),
  user_message: message,
  assistant_reply: "Noted.",
  turn_at: turnAt,
});

const memoriesOf = async (user: string) =>
  (
    await h.db.query<{ id: string; content: string }>("select id, content from agent_memories where user_id = $1", [
      user,
    ])
  ).rows;

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe("a memory the user deleted", () => {
  it("is not stored again by its own turn's extraction, redelivered after the deletion", async () => {
    const message = turn("fay", ago(5_000));
    expect(await h.extractor.process(message)).toMatchObject({ added: 1 });
    const [memory] = await memoriesOf("fay");
    expect(await h.store.deleteMemory("fay", memory!.id)).toBe(true);
    expect(await h.extractor.process(message)).toMatchObject({ added: 0, forgotten: 1 });
    expect(await memoriesOf("fay")).toEqual([]);
  });

  it("is not stored again by another turn from before the deletion, in other words", async () => {
    const before = ago(5_000);
    expect(await h.extractor.process(turn("gus", before))).toMatchObject({ added: 1 });
    const [memory] = await memoriesOf("gus");
    await h.store.deleteMemory("gus", memory!.id);
    // Not the same words, as near as the duplicate threshold (the hashing embedder's similarity).
    const similar = "My bank pin is 4321 now";
    const [a, b] = await h.embeddings.embedDocuments([memory!.content, similar]);
    expect(a!.reduce((n, x, i) => n + x * b![i]!, 0)).toBeGreaterThanOrEqual(0.8);
    expect(await h.extractor.process(turn("gus", before, similar))).toMatchObject({ added: 0, forgotten: 1 });
    expect(await memoriesOf("gus")).toEqual([]);
    // Something else said in that turn is stored.
    expect(await h.extractor.process(turn("gus", before, "I prefer aisle seats on short flights"))).toMatchObject({
      added: 1,
    });
  });

  it("is stored again when a turn after the deletion says it again", async () => {
    expect(await h.extractor.process(turn("hal", ago(5_000)))).toMatchObject({ added: 1 });
    const [memory] = await memoriesOf("hal");
    await h.store.deleteMemory("hal", memory!.id);
    expect(await h.extractor.process(turn("hal", new Date(Date.now() + 1_000).toISOString()))).toMatchObject({
      added: 1,
    });
    expect(await memoriesOf("hal")).toHaveLength(1);
  });

  it("is forgotten for its user only, and a store put (no turn) is new data", async () => {
    const before = ago(5_000);
    await h.extractor.process(turn("ida", before));
    await h.extractor.process(turn("jon", before));
    const [memory] = await memoriesOf("ida");
    await h.store.deleteMemory("ida", memory!.id);
    expect(await h.extractor.process(turn("jon", before))).toMatchObject({ forgotten: 0 });
    expect(await memoriesOf("jon")).toHaveLength(1);
    const [embedding] = await h.embeddings.embedDocuments([memory!.content]);
    const put = await h.store.insertMemory({
      userId: "ida",
      projectId: null,
      content: memory!.content,
      embedding: embedding!,
    });
    expect(put).toMatchObject({ created: true });
  });

  it("is not stored again by the remember tool of a turn begun before the deletion, which says so", async () => {
    const turnAt = ago(5_000);
    const scope = { userId: "kay", projectId: null, sessionId: crypto.randomUUID(), turnAt };
    const deps = { store: h.store, embeddings: h.embeddings };
    const remember = (content: string) =>
      storeMemory.run({ content }, { scope, deps } as never) as Promise<{ success: boolean; message: string }>;
    await remember("my locker code is 2210");
    const [memory] = await memoriesOf("kay");
    await h.store.deleteMemory("kay", memory!.id);
    const again = await remember("my locker code is 2210");
    expect(again.success).toBe(false);
    expect(again.message).toMatch(/asked .* to forget/);
    expect(await memoriesOf("kay")).toEqual([]);
  });

  it("leaves a mark that names no text and goes with the user's erasure", async () => {
    await h.extractor.process(turn("lea", ago(5_000), "My passport number is X1234567"));
    const [memory] = await memoriesOf("lea");
    await h.store.deleteMemory("lea", memory!.id);
    const marks = (
      await h.db.query<{ row: string }>("select t::text as row from forgotten_memories t where user_id = 'lea'")
    ).rows;
    expect(marks).toHaveLength(1);
    expect(marks[0]!.row).not.toMatch(/X1234567|passport/i);
    await new RpcUserData(sqlRpc(h.db)).erase("lea", []);
    expect((await h.db.query("select 1 from forgotten_memories where user_id = 'lea'")).rows).toEqual([]);
  });

  it("leaves its mark for 14 days: an older one refuses nothing, and the next deletion removes it", async () => {
    const message = turn("max", ago(5_000), "My favourite colour is green");
    await h.extractor.process(message);
    await h.extractor.process(turn("ned", ago(5_000), "My dog is called Rex"));
    const [green] = await memoriesOf("max");
    await h.store.deleteMemory("max", green!.id);
    await h.db.query("update forgotten_memories set forgotten_at = now() - interval '15 days' where user_id = 'max'");
    // A message of a turn from before the mark, delivered more than 14 days after it.
    const stale = { ...message, turn_at: new Date(Date.now() - 16 * 86_400_000).toISOString() };
    expect(await h.extractor.process(stale)).toMatchObject({ added: 1, forgotten: 0 });
    // Another user's deletion removes it.
    const [rex] = await memoriesOf("ned");
    await h.store.deleteMemory("ned", rex!.id);
    expect((await h.db.query("select user_id from forgotten_memories where user_id in ('max', 'ned')")).rows).toEqual([
      { user_id: "ned" },
    ]);
  });
});
