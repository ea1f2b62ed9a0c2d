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

  // The facts below are stored as the extraction stores them (its duplicate threshold as
  // sameSimilarity), with their own words: the offline extractor would reduce them to one wording.
  const stated = (user: string, content: string, turnAt: string, sessionId: string, projectId: string | null = null) =>
    h.embeddings.embedDocuments([content]).then(([embedding]) =>
      h.store.insertMemory({
        userId: user,
        projectId,
        content,
        embedding: embedding!,
        sourceSessionId: sessionId,
        turnAt,
        sameSimilarity: 0.8,
      }),
    );

  it("is not stored again in other words by the turn that stated it", async () => {
    const [turnAt, session] = [ago(5_000), crypto.randomUUID()];
    const first = await stated("gus", "My bank pin is 4321", turnAt, session);
    await h.store.deleteMemory("gus", first.id!);
    const similar = "My bank pin is 4321 for now";
    const [a, b] = await h.embeddings.embedDocuments(["My bank pin is 4321", similar]);
    expect(a!.reduce((n, x, i) => n + x * b![i]!, 0)).toBeGreaterThanOrEqual(0.8);
    expect(await stated("gus", similar, turnAt, session)).toMatchObject({ forgotten: true });
    expect(await memoriesOf("gus")).toEqual([]);
    // Something else that turn said is stored.
    expect(await h.extractor.process(turn("gus", turnAt, "I prefer aisle seats on short flights"))).toMatchObject({
      added: 1,
    });
  });

  // A review's finding: a correction said in another turn from before the deletion ("Globex", the
  // old fact "Acme" deleted meanwhile) is as near the deleted memory as a rewording, and was lost.
  it("keeps a correction another earlier turn made, however near the deleted memory's words", async () => {
    const session = crypto.randomUUID();
    const old = await stated("guy", "I work at Acme Corporation as a senior backend engineer", ago(60_000), session);
    const later = ago(5_000);
    await h.store.deleteMemory("guy", old.id!);
    expect(
      await stated("guy", "I work at Globex Corporation as a senior backend engineer", later, session),
    ).toMatchObject({ created: true });
  });

  // A review's finding: the user's memories with no project are every project's, and a deleted one
  // came back through a turn in a project.
  it("is not stored again through a project's turn when it had no project", async () => {
    const [turnAt, session] = [ago(5_000), crypto.randomUUID()];
    const first = await stated("ira", "My bank pin is 4321", turnAt, session);
    await h.store.deleteMemory("ira", first.id!);
    expect(await stated("ira", "My bank pin is 4321", turnAt, session, "proj")).toMatchObject({ forgotten: true });
  });

  // A re-probe's finding, the mirror of the one above: a memory deleted in a project came back
  // there through a turn with no project (the user's memories with none are every project's).
  it("is not stored again with no project when it was deleted in a project", async () => {
    const [turnAt, session] = [ago(5_000), crypto.randomUUID()];
    const first = await stated("ivo", "My bank pin is 4321", turnAt, session, "proj");
    await h.store.deleteMemory("ivo", first.id!);
    expect(await stated("ivo", "My bank pin is 4321", turnAt, session, null)).toMatchObject({ forgotten: true });
    // Another project's own memory is its own: kept.
    expect(await stated("ivo", "My bank pin is 4321", turnAt, session, "other")).toMatchObject({ created: true });
  });

  it("is refused by its own turn within the clocks' 5 s, as an erasure's tombstone is", async () => {
    const first = await stated("jan", "My bank pin is 4321", ago(5_000), crypto.randomUUID());
    await h.store.deleteMemory("jan", first.id!);
    const skewed = new Date(Date.now() + 2_000).toISOString();
    expect(await stated("jan", "My bank pin is 4321", skewed, crypto.randomUUID())).toMatchObject({ forgotten: true });
  });

  it("answers the memory said again since, not forgotten, when an earlier turn's message comes late", async () => {
    const session = crypto.randomUUID();
    const first = await stated("kit", "My bank pin is 4321", ago(60_000), session);
    await h.store.deleteMemory("kit", first.id!);
    const again = await stated("kit", "My bank pin is 4321", new Date(Date.now() + 10_000).toISOString(), session);
    expect(again).toMatchObject({ created: true });
    expect(await stated("kit", "My bank pin is 4321", ago(60_000), session)).toEqual({ id: again.id, created: false });
  });

  it("is stored again when a turn after the deletion says it again", async () => {
    expect(await h.extractor.process(turn("hal", ago(5_000)))).toMatchObject({ added: 1 });
    const [memory] = await memoriesOf("hal");
    await h.store.deleteMemory("hal", memory!.id);
    // (Past the 5 s the clocks are allowed: a turn begun within them counts as before the deletion.)
    expect(await h.extractor.process(turn("hal", new Date(Date.now() + 6_000).toISOString()))).toMatchObject({
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

  it("leaves a mark without the text (derived from it all the same) that goes with the user's erasure", async () => {
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

  // The eleventh part's leftover: the marks are data held about the user (derived from the words
  // they deleted), so the export (GDPR article 15) shows them, and only the user's own.
  it("is in the user's export as its mark, and in no one else's", async () => {
    await h.extractor.process(turn("mia", ago(5_000), "My gym is on Elm Street"));
    await h.extractor.process(turn("noa", ago(5_000), "My gym is on Oak Street"));
    const [memory] = await memoriesOf("mia");
    await h.store.deleteMemory("mia", memory!.id);
    const data = new RpcUserData(sqlRpc(h.db));
    const exported = await data.export("mia");
    expect(exported.forgotten_memories).toHaveLength(1);
    const [mark] = exported.forgotten_memories;
    const { rows } = await h.db.query<{ content_hash: string }>(
      "select content_hash from forgotten_memories where user_id = 'mia'",
    );
    expect(mark).toMatchObject({
      project_id: null,
      content_hash: rows[0]!.content_hash,
      forgotten_at: expect.any(String),
    });
    expect(mark!.embedding).toHaveLength(1024);
    expect((await data.export("noa")).forgotten_memories).toEqual([]);
  });

  // A review's finding: a message can wait longer than the marks last (a dead-letter redrive
  // starts its retention again), and then brought the deleted memory back.
  it("refuses any fact of a turn older than the marks last, and the next deletion removes older marks", async () => {
    const message = turn("max", ago(5_000), "My favourite colour is green");
    await h.extractor.process(message);
    await h.extractor.process(turn("ned", ago(5_000), "My dog is called Rex"));
    const [green] = await memoriesOf("max");
    await h.store.deleteMemory("max", green!.id);
    await h.db.query("update forgotten_memories set forgotten_at = now() - interval '15 days' where user_id = 'max'");
    // A message of a turn from before the mark, delivered more than 14 days after it.
    const stale = { ...message, turn_at: new Date(Date.now() - 16 * 86_400_000).toISOString() };
    expect(await h.extractor.process(stale)).toMatchObject({ added: 0, forgotten: 1 });
    expect(await memoriesOf("max")).toEqual([]);
    // Another user's deletion removes the expired mark.
    const [rex] = await memoriesOf("ned");
    await h.store.deleteMemory("ned", rex!.id);
    expect((await h.db.query("select user_id from forgotten_memories where user_id in ('max', 'ned')")).rows).toEqual([
      { user_id: "ned" },
    ]);
  });
});
