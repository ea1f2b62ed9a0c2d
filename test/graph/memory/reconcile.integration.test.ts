import type { PGlite } from "@electric-sql/pglite";
import { extractFacts } from "../../../graph/memory/extract";
import type { MemoryExtractor } from "../../../graph/memory/extractor";
import { storeMemory } from "../../../graph/tools/memory-store";
import type { ExtractionMessage } from "../../../graph/memory/message";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import type { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { extractionHarness } from "../../support/extraction";

let db: PGlite;
let store: RpcAgentStore;
let extractor: MemoryExtractor;
beforeAll(async () => {
  ({ db, store, extractor } = await extractionHarness());
}, 60_000);
afterAll(() => db.close());

let turns = 0;
const HOUR_AGO = Date.now() - 3_600_000;
const turn = (user: string, text: string, reply = "Noted."): ExtractionMessage => ({
  user_id: user,
  project_id: null,
  session_id: `s-${++turns}`,
  turn_id: `t-${turns}`,
  user_message: text,
  assistant_reply: reply,
});
const rows = async (user: string) =>
  (
    await db.query<{ content: string; superseded_by: string | null; source_session_id: string }>(
      "select content, superseded_by, source_session_id from agent_memories where user_id = $1 order by created_at",
      [user],
    )
  ).rows;

describe("fact extraction (offline rules through structured output)", () => {
  it("keeps durable facts and drops small talk, questions and the assistant's words", async () => {
    const { facts, tokens } = await extractFacts(
      new OfflineChatModel({}),
      turn("x", "Hi there! I prefer window seats on long flights. What's the weather like?", "I love sunny days."),
    );
    expect(facts).toEqual([
      { content: "I prefer window seats on long flights", category: "preference", subject: "likes window seats" },
    ]);
    // The model call's tokens, as the offline stand-in reports them (Bedrock's usage, estimated).
    expect(tokens).toBeGreaterThan(0);
  });

  it("returns at most 5 facts", async () => {
    const text = Array.from({ length: 8 }, (_, i) => `I live in city${i}.`).join(" ");
    expect((await extractFacts(new OfflineChatModel({}), turn("x", text))).facts).toHaveLength(5);
  });
});

describe("reconciliation", () => {
  it("adds a new fact with its session as source", async () => {
    const result = await extractor.process(turn("ana", "I prefer window seats on long flights"));
    expect(result).toEqual({
      facts: 1,
      tokens: expect.any(Number),
      added: 1,
      duplicates: 0,
      superseded: 0,
      forgotten: 0,
    });
    expect(await rows("ana")).toEqual([
      { content: "I prefer window seats on long flights", superseded_by: null, source_session_id: `s-${turns}` },
    ]);
  });

  it("skips the same fact said again, reworded or not, in another session", async () => {
    expect(await extractor.process(turn("ana", "I prefer window seats on long flights."))).toMatchObject({
      added: 0,
      duplicates: 1,
    });
    expect(await extractor.process(turn("ana", "Actually, I prefer window seats on long flights!"))).toMatchObject({
      added: 0,
    });
    expect(await rows("ana")).toHaveLength(1);
  });

  it("supersedes a changed fact and keeps the old one", async () => {
    await extractor.process(turn("ben", "my favourite colour is teal"));
    const result = await extractor.process(turn("ben", "Actually my favourite colour is green now"));
    expect(result).toEqual({
      facts: 1,
      tokens: expect.any(Number),
      added: 1,
      duplicates: 0,
      superseded: 1,
      forgotten: 0,
    });
    const [teal, green] = await rows("ben");
    expect(green).toMatchObject({ content: "My favourite colour is green", superseded_by: null });
    expect(teal!.content).toBe("My favourite colour is teal");
    expect(teal!.superseded_by).not.toBeNull();
    expect((await store.listMemories("ben", { limit: 10 })).map((m) => m.content)).toEqual([
      "My favourite colour is green",
    ]);
  });

  it("keeps the later turn's fact current whichever turn's extraction lands first (a late or redelivered message)", async () => {
    // An hour ago: a turn older than the forgotten memories' marks last (14 days) stores nothing.
    const at = (seconds: number) => new Date(HOUR_AGO + seconds * 1000).toISOString();
    const current = async (user: string) => (await store.listMemories(user, { limit: 10 })).map((m) => m.content);
    // In order: the later statement replaces the earlier.
    await extractor.process({ ...turn("gil", "my favourite colour is blue"), turn_at: at(0) });
    await extractor.process({ ...turn("gil", "my favourite colour is red"), turn_at: at(30) });
    expect(await current("gil")).toEqual(["My favourite colour is red"]);
    // Out of order: the earlier statement arrives after the later one, and is kept as replaced.
    await extractor.process({ ...turn("hal", "my favourite colour is red"), turn_at: at(30) });
    const late = await extractor.process({ ...turn("hal", "my favourite colour is blue"), turn_at: at(0) });
    expect(late).toMatchObject({ superseded: 0 });
    expect(await current("hal")).toEqual(["My favourite colour is red"]);
    expect((await rows("hal")).map((r) => [r.content, r.superseded_by === null])).toEqual([
      ["My favourite colour is red", true],
      ["My favourite colour is blue", false],
    ]);
    // Redelivered again, the earlier statement does not come back either.
    await extractor.process({ ...turn("hal", "my favourite colour is blue"), turn_at: at(0) });
    expect(await current("hal")).toEqual(["My favourite colour is red"]);
  });

  it("counts a fact said again from its latest saying: blue, blue again, then red said between them arriving late", async () => {
    // An hour ago: a turn older than the forgotten memories' marks last (14 days) stores nothing.
    const at = (seconds: number) => new Date(HOUR_AGO + seconds * 1000).toISOString();
    await extractor.process({ ...turn("jo", "my favourite colour is blue"), turn_at: at(0) });
    await extractor.process({ ...turn("jo", "my favourite colour is blue"), turn_at: at(60) });
    await extractor.process({ ...turn("jo", "my favourite colour is red"), turn_at: at(30) });
    expect((await store.listMemories("jo", { limit: 10 })).map((m) => m.content)).toEqual([
      "My favourite colour is blue",
    ]);
  });

  it("keeps the later turn's fact current when both turns are reconciled at the same moment", async () => {
    // An hour ago: a turn older than the forgotten memories' marks last (14 days) stores nothing.
    const at = (seconds: number) => new Date(HOUR_AGO + seconds * 1000).toISOString();
    for (let trial = 0; trial < 6; trial++) {
      const user = `ivy-${trial}`;
      // Each reads its neighbours before the other's memory is stored: neither sees the other.
      const [early, late] = [
        { ...turn(user, "my favourite colour is blue"), turn_at: at(0) },
        { ...turn(user, "my favourite colour is red"), turn_at: at(30) },
      ];
      await Promise.all(
        trial % 2
          ? [extractor.process(late), extractor.process(early)]
          : [extractor.process(early), extractor.process(late)],
      );
      expect((await store.listMemories(user, { limit: 10 })).map((m) => m.content)).toEqual([
        "My favourite colour is red",
      ]);
    }
  });

  it("changes nothing when the same turn is processed twice", async () => {
    const t = turn("cy", "I work at Acme Corp. I live in Porto.");
    expect(await extractor.process(t)).toMatchObject({ added: 2 });
    const before = await rows("cy");
    expect(await extractor.process(t)).toMatchObject({ added: 0, duplicates: 2, superseded: 0 });
    expect(await rows("cy")).toEqual(before);
  });

  it("supersedes a memory the user stored through the tool, read by its subject", async () => {
    const embedder = new HashingEmbeddings(1024);
    // Stored as the store_memory tool stores it: with the subject the model gave (here, the stand-in's).
    const stored = await storeMemory.run(storeMemory.offline!.args!("I live in Leeds") as never, {
      scope: { userId: "di", projectId: null, sessionId: null },
      deps: { store, embeddings: embedder, minMemoryScore: 0 },
    });
    expect(stored).toMatchObject({ success: true });
    expect(await extractor.process(turn("di", "I live in York now"))).toMatchObject({ added: 1, superseded: 1 });
  });

  it("never touches another user's memories", async () => {
    await extractor.process(turn("eve", "my favourite colour is red"));
    await extractor.process(turn("fox", "my favourite colour is blue"));
    expect((await rows("eve")).map((r) => r.superseded_by)).toEqual([null]);
  });
});
