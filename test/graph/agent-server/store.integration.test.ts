import type { PGlite } from "@electric-sql/pglite";
import { MemoryItems, userLabel } from "../../../graph/agent-server/store";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";

// The Agent Server API's store over PGlite with the migrations: every lookup covers all of a
// user's memories, not the newest 200 (a window the store used to read and search in).

let postgres: PGlite;
let store: RpcAgentStore;
let items: MemoryItems;
const embeddings = new HashingEmbeddings(1024);

beforeAll(async () => {
  postgres = await startLocalPostgres();
  store = new RpcAgentStore(sqlRpc(postgres));
  items = new MemoryItems(store, embeddings);
}, 60_000);
afterAll(() => postgres?.close());

/** `n` newer memories of the user's, as the agent stores them (no store key). */
async function bury(userId: string, n: number) {
  const [embedding] = await embeddings.embedDocuments(["filler"]);
  for (let i = 0; i < n; i++)
    await store.insertMemory({ userId, projectId: null, content: `filler fact number ${i}`, embedding: embedding! });
}

describe("an item put again", () => {
  it("reads the value put last: A, then B, then A again is A", async () => {
    const ns = ["memories", "zed"];
    for (const content of ["My dog is called Rex", "My dog is called Bolt", "My dog is called Rex"])
      await items.put("zed", { namespace: ns, key: "pet", value: { content } });
    expect((await items.get("zed", ns, "pet"))!.value.content).toBe("My dog is called Rex");
  });
});

describe("the store past 200 items", () => {
  it("gets, replaces and deletes an item however many newer memories the user has", async () => {
    const ns = ["memories", "dana"];
    await items.put("dana", { namespace: ns, key: "pet", value: { content: "My dog is called Rex" } });
    await items.put("dana", { namespace: [...ns, "work"], key: "stack", value: { content: "We deploy with the CDK" } });
    await bury("dana", 210);

    expect((await items.get("dana", ns, "pet"))!.value.content).toBe("My dog is called Rex");
    // Under the same key: one current item, the newer one.
    await items.put("dana", { namespace: ns, key: "pet", value: { content: "My dog is called Bolt" } });
    const current = await store.storeItems({ userId: "dana", projectId: null, key: "pet", limit: 10, offset: 0 });
    expect(current.map((m) => m.content)).toEqual(["My dog is called Bolt"]);
    // Past the newest 200 in a search, and a namespace whose memories are all older than them.
    const page = await items.search("dana", { namespace_prefix: ns, limit: 100, offset: 200 });
    expect(page.items.map((i) => i.key)).toContain("stack");
    expect((await items.namespaces("dana", { limit: 100, offset: 0 })).namespaces).toEqual([
      ["memories", "dana"],
      ["memories", "dana", "work"],
    ]);
    const stack = await items.search("dana", { namespace_prefix: [...ns, "work"], limit: 10, offset: 0 });
    expect(stack.items.map((i) => i.key)).toEqual(["stack"]);

    // A delete deletes: the agent's recall no longer finds it either.
    await items.delete("dana", ns, "pet");
    // A key it no longer holds is null, as LangGraph's store answers it.
    expect(await items.get("dana", ns, "pet")).toBeNull();
    const [query] = await embeddings.embedDocuments(["My dog is called Bolt"]);
    const recalled = await store.matchMemories({ embedding: query!, userId: "dana", projectId: null, limit: 5 });
    expect(recalled.map((m) => m.content)).not.toContain("My dog is called Bolt");
  }, 60_000);

  it("filters in the database, over all of the user's items", async () => {
    await items.put("erin", {
      namespace: ["memories", "erin"],
      key: "seat",
      value: { content: "Prefers aisle seats", category: "travel", tags: ["flights"] },
    });
    await bury("erin", 205);
    const found = await items.search("erin", {
      namespace_prefix: ["memories"],
      filter: { category: "travel", tags: ["flights"] },
      limit: 10,
      offset: 0,
    });
    expect(found.items.map((i) => i.key)).toEqual(["seat"]);
    const none = await items.search("erin", {
      namespace_prefix: ["memories"],
      filter: { category: "travel", colour: "teal" },
      limit: 10,
      offset: 0,
    });
    expect(none.items).toEqual([]);
  }, 60_000);

  it("names a user whose id holds periods by a label without them, and reads either spelling", async () => {
    expect(userLabel("ann.smith%1")).toBe("ann%2Esmith%251");
    expect(userLabel("ann")).toBe("ann");
    await items.put("ann.smith", {
      namespace: ["memories", "ann%2Esmith", "trip.2026"],
      key: "k",
      value: { content: "Flies to Lisbon" },
    });
    const got = await items.get("ann.smith", items.namespaceOfQuery("ann.smith", "memories.ann.smith.trip.2026"), "k");
    expect(got!.namespace).toEqual(["memories", "ann%2Esmith", "trip.2026"]);
    expect(items.namespaceOfQuery("ann.smith", "memories.ann%2Esmith")).toEqual(["memories", "ann%2Esmith"]);
    await expect(items.get("bob", ["memories", "ann%2Esmith", "trip.2026"], "k")).rejects.toMatchObject({
      status: 404,
    });
  });
});
