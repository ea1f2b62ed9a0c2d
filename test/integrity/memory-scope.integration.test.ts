import type { PGlite } from "@electric-sql/pglite";
import type { MemoryExtractor } from "../../graph/memory/extractor";
import type { ExtractionMessage } from "../../graph/memory/message";
import type { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { storedMemory } from "../../shared/stores/agent-store";
import type { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { extractionHarness } from "../support/extraction";

// Supersession stays inside its scope, and deleting a memory never
// brings back the fact it replaced. Driven through the extraction consumer's reconciliation.

let db: PGlite;
let store: RpcAgentStore;
let extractor: MemoryExtractor;
let embeddings: HashingEmbeddings;
beforeAll(async () => {
  ({ db, store, extractor, embeddings } = await extractionHarness());
}, 60_000);
afterAll(() => db.close());

let turns = 0;
const say = (user: string, text: string, project: string | null = null) =>
  extractor.process({
    user_id: user,
    project_id: project,
    session_id: `s-${++turns}`,
    turn_id: `t-${turns}`,
    user_message: text,
    assistant_reply: "Noted.",
  } satisfies ExtractionMessage);

/** What recall would find for `query` in a project (or outside any). */
async function recall(user: string, query: string, project: string | null = null) {
  const matches = await store.matchMemories({
    embedding: await embeddings.embedQuery(query),
    limit: 10,
    userId: user,
    projectId: project,
  });
  return matches.map((m) => m.content).sort();
}

describe("Supersession never crosses scopes", () => {
  it("a correction inside a project leaves the unprojected fact current outside it", async () => {
    await say("hal", "My car is a Volvo");
    await say("hal", "Actually my car is a Tesla", "garage");
    expect(await recall("hal", "what is my car")).toEqual(["My car is a Volvo"]);
    expect(await recall("hal", "what is my car", "kitchen")).toEqual(["My car is a Volvo"]);
    expect(await recall("hal", "what is my car", "garage")).toContain("My car is a Tesla");
  });

  it("a correction supersedes the same project's fact, and no other project's", async () => {
    await say("ivy", "My editor is vim", "p1");
    await say("ivy", "My editor is nano", "p2");
    await say("ivy", "My editor is now emacs", "p1");
    expect(await recall("ivy", "which editor", "p1")).toEqual(["My editor is emacs"]);
    expect(await recall("ivy", "which editor", "p2")).toEqual(["My editor is nano"]);
  });

  it("refuses a cross-scope supersession in SQL, whatever ids the caller passes", async () => {
    const [e] = await embeddings.embedDocuments(["x"]);
    const plain = await store
      .insertMemory({
        userId: "jay",
        projectId: null,
        content: "My desk is oak",
        embedding: e!,
      })
      .then(storedMemory);
    const scoped = await store
      .insertMemory({
        userId: "jay",
        projectId: "p",
        content: "My desk is pine",
        embedding: e!,
      })
      .then(storedMemory);
    expect(await store.supersedeMemories("jay", [plain.id], scoped.id)).toBe(0);
    const other = await store
      .insertMemory({
        userId: "jay",
        projectId: "p",
        content: "My desk is teak",
        embedding: e!,
      })
      .then(storedMemory);
    expect(await store.supersedeMemories("jay", [scoped.id], other.id)).toBe(1);
  });
});

describe("Deleting a memory does not resurrect the fact it replaced", () => {
  it("keeps the replaced fact superseded after its successor is deleted", async () => {
    await say("kim", "My bike is red");
    await say("kim", "My bike is now green");
    const [green] = await store.listMemories("kim", { limit: 10 });
    expect(green?.content).toBe("My bike is green");
    expect(await store.deleteMemory("kim", green!.id)).toBe(true);
    expect(await store.listMemories("kim", { limit: 10 })).toEqual([]);
    expect(await recall("kim", "what colour is my bike")).toEqual([]);
  });

  it("keeps a chain superseded when its middle and end are deleted, and revives a fact said again", async () => {
    await say("lee", "My city is Oslo");
    await say("lee", "My city is now Bergen");
    await say("lee", "My city is now Tromso");
    for (const m of await store.listMemories("lee", { limit: 10 })) await store.deleteMemory("lee", m.id);
    const { rows } = await db.query<{ content: string }>(
      "select content from agent_memories where user_id = 'lee' and superseded_by is null",
    );
    expect(rows).toEqual([]);
    await say("lee", "My city is Oslo");
    expect((await store.listMemories("lee", { limit: 10 })).map((m) => m.content)).toEqual(["My city is Oslo"]);
  });
});
