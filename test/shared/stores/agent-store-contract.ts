import type { PGlite } from "@electric-sql/pglite";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { type AgentStore, storedMemory } from "../../../shared/stores/agent-store";
import type { Rpc } from "../../../shared/stores/rpc";
import { AGENT_STORE_CALLS, RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { heldToTable } from "../../support/rpc-signatures";

/**
 * The behaviour the agent store must have, over each transport (SQL and PostgREST), on PGlite with
 * the migrations. `seedUserContext` reaches under the interface: nothing in the app writes a
 * user's context yet; `seedMemories` too, where 600 stores one by one (each checked for a duplicate)
 * cost seconds that the test does not test.
 */
export interface ContractHarness {
  store: AgentStore;
  seedUserContext(userId: string, plan: string, usage: object, preferences: object): Promise<void>;
  /** Many memories in one statement, for a test whose subject is reading them, not storing them. */
  seedMemories(rows: { userId: string; content: string; embedding: number[] }[]): Promise<void>;
  /** `count` documents of `bucket` (`<bucket>/doc-0000`…), the first with `chunks` chunks. */
  seedDocuments(bucket: string, count: number, chunks: number): Promise<void>;
}

const embedder = new HashingEmbeddings(1024);
const embed = (text: string) => embedder.embed(text);

export function agentStoreContract(name: string, setup: () => Promise<ContractHarness>) {
  describe(`${name}: memories`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await setup();
    }, 60_000);

    const add = (userId: string | null, projectId: string | null, content: string, extra: object = {}) =>
      h.store.insertMemory({ userId, projectId, content, embedding: embed(content), ...extra }).then(storedMemory);

    it("stores a fact once per scope: the same words in another case or spacing find the existing memory", async () => {
      const first = await add("u-dedup", null, "My favourite colour is teal");
      const again = await add("u-dedup", null, "  my favourite   COLOUR is teal ");
      expect(first.created).toBe(true);
      expect(again).toEqual({ id: first.id, created: false });
      expect((await add("u-other", null, "My favourite colour is teal")).id).not.toBe(first.id);
      expect((await add("u-dedup", "p1", "My favourite colour is teal")).id).not.toBe(first.id);
    });

    it("never returns another user's memory, whatever the query", async () => {
      await add("alice", null, "Alice's dog is called Biscuit");
      const results = await h.store.matchMemories({
        embedding: embed("Alice's dog is called Biscuit"),
        limit: 10,
        userId: "mallory",
      });
      expect(results.map((r) => r.content)).not.toContain("Alice's dog is called Biscuit");
      const own = await h.store.matchMemories({ embedding: embed("dog name"), limit: 10, userId: "alice" });
      expect(own[0]?.content).toBe("Alice's dog is called Biscuit");
      expect(own[0]!.similarity).toBeGreaterThan(0.2);
    });

    it("never returns a superseded memory, and a fact said again becomes current", async () => {
      const old = await add("bob", null, "Bob's favourite colour is red");
      const next = await add("bob", null, "Bob's favourite colour is now green");
      expect(await h.store.supersedeMemories("bob", [old.id], next.id)).toBe(1);
      expect(await h.store.supersedeMemories("bob", [old.id], next.id)).toBe(0);
      expect(
        (await h.store.listMemories("bob", { limit: 10, superseded: true })).find((m) => m.id === old.id),
      ).toMatchObject({ supersededBy: next.id });
      const results = await h.store.matchMemories({
        embedding: embed("Bob favourite colour"),
        limit: 10,
        userId: "bob",
      });
      expect(results.map((r) => r.content)).toEqual(["Bob's favourite colour is now green"]);
      expect((await h.store.listMemories("bob", { limit: 10 })).map((m) => m.content)).toEqual([
        "Bob's favourite colour is now green",
      ]);
      expect(await add("bob", null, "Bob's favourite colour is red")).toEqual({ id: old.id, created: false });
      expect(
        (await h.store.matchMemories({ embedding: embed("Bob favourite colour"), limit: 10, userId: "bob" })).length,
      ).toBe(2);
    });

    it("scopes projects: a project chat sees that project plus the user's unprojected memories", async () => {
      await add("carol", "apollo", "Apollo ships on the 3rd");
      await add("carol", "gemini", "Gemini ships on the 9th");
      await add("carol", null, "Carol works in Lisbon");
      const inApollo = await h.store.matchMemories({
        embedding: embed("ships Lisbon"),
        limit: 10,
        userId: "carol",
        projectId: "apollo",
      });
      expect(inApollo.map((r) => r.content).sort()).toEqual(["Apollo ships on the 3rd", "Carol works in Lisbon"]);
      const noProject = await h.store.matchMemories({ embedding: embed("ships Lisbon"), limit: 10, userId: "carol" });
      expect(noProject.map((r) => r.content)).toEqual(["Carol works in Lisbon"]);
    });

    it("filters by category and tags", async () => {
      await add("dan", null, "Dan prefers email over phone", { category: "preference", tags: ["contact"] });
      await add("dan", null, "Dan decided to renew annually", { category: "decision", tags: ["billing", "renewal"] });
      const prefs = await h.store.matchMemories({
        embedding: embed("Dan"),
        limit: 10,
        userId: "dan",
        category: "preference",
      });
      expect(prefs.map((r) => r.content)).toEqual(["Dan prefers email over phone"]);
      const tagged = await h.store.matchMemories({
        embedding: embed("Dan"),
        limit: 10,
        userId: "dan",
        tags: ["billing"],
      });
      expect(tagged.map((r) => r.content)).toEqual(["Dan decided to renew annually"]);
      expect(tagged[0]).toMatchObject({ category: "decision", tags: ["billing", "renewal"] });
    });

    it("returns match_count rows even when the filter keeps few of the nearest neighbours", async () => {
      // 600 other users' memories crowd the HNSW neighbourhood; the iterative scan still finds 5 of erin's.
      await h.seedMemories(
        Array.from({ length: 600 }, (_, i) => {
          const content = `shipping update number ${i} for the order`;
          return { userId: `crowd-${i}`, content, embedding: embed(content) };
        }),
      );
      for (let i = 0; i < 7; i++) await add("erin", null, `erin note ${i} about gardening and tomatoes`);
      const results = await h.store.matchMemories({
        embedding: embed("shipping update for the order"),
        limit: 5,
        userId: "erin",
      });
      expect(results).toHaveLength(5);
      expect(results.every((r) => r.content.startsWith("erin"))).toBe(true);
    }, 60_000);

    it("lists a user's memories newest first with filters and a limit, and deletes only their own", async () => {
      for (const text of ["first", "second", "third"])
        await add("fay", null, `fay ${text}`, { tags: text === "second" ? ["x"] : [] });
      const listed = await h.store.listMemories("fay", { limit: 2 });
      expect(listed.map((m) => m.content)).toEqual(["fay third", "fay second"]);
      expect((await h.store.listMemories("fay", { limit: 10, tag: "x" })).map((m) => m.content)).toEqual([
        "fay second",
      ]);
      const target = listed[0]!;
      expect(await h.store.deleteMemory("mallory", target.id)).toBe(false);
      expect(await h.store.deleteMemory("fay", target.id)).toBe(true);
      expect(await h.store.deleteMemory("fay", target.id)).toBe(false);
      expect((await h.store.listMemories("fay", { limit: 10 })).map((m) => m.content)).toEqual([
        "fay second",
        "fay first",
      ]);
    });

    it("keeps text, tags and metadata exactly as given: quotes, commas, braces, emoji, newlines", async () => {
      const content = 'Gil said "hi\\there", {braces} & commas, 🦆\nsecond line';
      const tags = ["a,b", "{c}", 'd"e', "é"];
      const metadata = { nested: { list: [1, "two", null] }, quote: '"', unicode: "ü🦆" };
      const { id } = await add("gil", null, content, { category: "quirky", tags, metadata });
      const [listed] = await h.store.listMemories("gil", { limit: 1, tag: "a,b", category: "quirky" });
      expect(listed).toMatchObject({ id, userId: "gil", projectId: null, content, category: "quirky", tags, metadata });
      expect(listed!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const [match] = await h.store.matchMemories({
        embedding: embed(content),
        limit: 1,
        userId: "gil",
        tags: ["{c}"],
      });
      expect(match).toMatchObject({ id, content, tags, metadata });
    });
  });

  describe(`${name}: global memories`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await setup();
    }, 60_000);

    it("dedups global facts too (null user and project are not distinct), and shows them to every user", async () => {
      const content = "The office closes at 6pm on Fridays";
      const a = await h.store.insertMemory({ userId: null, projectId: null, content, embedding: embed(content) });
      const b = await h.store.insertMemory({ userId: null, projectId: null, content, embedding: embed(content) });
      expect(b).toEqual({ id: a.id, created: false });
      const results = await h.store.matchMemories({
        embedding: embed("when does the office close"),
        limit: 10,
        userId: "anyone",
      });
      expect(results.map((r) => r.content)).toEqual([content]);
    });
  });

  describe(`${name}: user context and knowledge`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await setup();
      await h.seedUserContext("gus", "Pro", { seats: 5 }, { language: "en" });
      const docs = [
        "Refunds are issued within 30 days of purchase to the original payment method.",
        "Our offices are in Berlin and Lisbon.",
        "Invoices can be downloaded from the billing page as PDF.",
        "Passwords can be reset from the login screen.",
      ];
      await h.store.replaceDocument(
        { documentId: "kb/faq.md", source: "faq.md", sequencer: "01" },
        docs.map((content, index) => ({ index, content, metadata: {}, embedding: embed(content) })),
      );
    }, 60_000);

    it("reads a user's context, or nothing for an unknown user", async () => {
      expect(await h.store.getUserContext("gus")).toMatchObject({
        plan: "Pro",
        usage: { seats: 5 },
        preferences: { language: "en" },
      });
      expect(await h.store.getUserContext("nobody")).toBeUndefined();
    });

    it("finds knowledge by words and meaning, fused into one ranking", async () => {
      const q = "how do I get a refund?";
      const results = await h.store.matchKnowledge({ text: q, embedding: embed(q), limit: 3 });
      expect(results[0]).toMatchObject({
        documentId: "kb/faq.md",
        source: "faq.md",
        content: expect.stringContaining("Refunds"),
      });
      expect(results.length).toBeLessThanOrEqual(3);
      expect(results[0]!.similarity).toBeGreaterThan(results[results.length - 1]!.similarity);
      const vectorOnly = await h.store.matchKnowledge({ text: q, embedding: embed(q), limit: 3, fullTextWeight: 0 });
      expect(vectorOnly.length).toBeGreaterThan(0);
    });

    it("answers a ping", async () => {
      await expect(h.store.ping()).resolves.toBeUndefined();
    });
  });

  describe(`${name}: the Agent Server's store items`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await setup();
    }, 60_000);

    it("puts, gets, replaces and deletes an item, its JSON kept exactly, for its user only", async () => {
      const value = {
        text: 'quotes " and \\ slashes, emoji 🐈, newline\n',
        n: 1.5,
        list: [1, { deep: null }],
        t: true,
      };
      await h.store.putItem({ userId: "ivy", namespace: ["notes", "work"], key: "k1", value });
      const got = await h.store.getItem("ivy", ["notes", "work"], "k1");
      expect(got).toMatchObject({ namespace: ["notes", "work"], key: "k1", value });
      expect(await h.store.getItem("mallory", ["notes", "work"], "k1")).toBeUndefined();
      expect(await h.store.getItem("ivy", ["notes"], "k1")).toBeUndefined();

      await h.store.putItem({ userId: "ivy", namespace: ["notes", "work"], key: "k1", value: { text: "new" } });
      const replaced = await h.store.getItem("ivy", ["notes", "work"], "k1");
      expect(replaced!.value).toEqual({ text: "new" });
      expect(replaced!.createdAt).toBe(got!.createdAt);
      expect(new Date(replaced!.updatedAt).getTime()).toBeGreaterThan(new Date(got!.updatedAt).getTime());

      expect(await h.store.deleteItem("mallory", ["notes", "work"], "k1")).toBe(false);
      expect(await h.store.deleteItem("ivy", ["notes", "work"], "k1")).toBe(true);
      expect(await h.store.getItem("ivy", ["notes", "work"], "k1")).toBeUndefined();
    });

    it("searches under a prefix, by filter, and by meaning on the indexed items only", async () => {
      const put = (namespace: string[], key: string, value: Record<string, unknown>, indexed = true) =>
        h.store.putItem({
          userId: "jon",
          namespace,
          key,
          value,
          ...(indexed ? { embedding: embed(JSON.stringify(value)) } : {}),
        });
      await put(["docs", "a"], "1", { topic: "cats", text: "cats purr and sleep" });
      await put(["docs", "b"], "2", { topic: "dogs", text: "dogs bark at the mail carrier" });
      await put(["docs", "b"], "3", { topic: "cats", text: "a cat on the mat" }, false);
      await put(["other"], "4", { topic: "cats", text: "unrelated namespace" });
      await h.store.putItem({ userId: "kim", namespace: ["docs", "a"], key: "9", value: { topic: "cats" } });

      const under = await h.store.searchItems({ userId: "jon", prefix: ["docs"], limit: 10, offset: 0 });
      expect(under.map((i) => i.key).sort()).toEqual(["1", "2", "3"]);
      const cats = await h.store.searchItems({
        userId: "jon",
        prefix: ["docs"],
        filter: { topic: "cats" },
        limit: 10,
        offset: 0,
      });
      expect(cats.map((i) => i.key).sort()).toEqual(["1", "3"]);
      const byMeaning = await h.store.searchItems({
        userId: "jon",
        prefix: [],
        embedding: embed("dogs bark"),
        limit: 10,
        offset: 0,
      });
      expect(byMeaning[0]!.key).toBe("2");
      expect(byMeaning[0]!.score).toBeGreaterThan(byMeaning.at(-1)!.score!);
      // Item 3 was put without an index: not found by meaning.
      expect(byMeaning.map((i) => i.key)).not.toContain("3");
      expect(
        (await h.store.searchItems({ userId: "jon", prefix: ["docs"], limit: 1, offset: 1 })).map((i) => i.key),
      ).toHaveLength(1);

      expect(await h.store.listNamespaces({ userId: "jon", prefix: [], suffix: [], limit: 10, offset: 0 })).toEqual([
        ["docs", "a"],
        ["docs", "b"],
        ["other"],
      ]);
      expect(
        await h.store.listNamespaces({
          userId: "jon",
          prefix: ["docs"],
          suffix: [],
          maxDepth: 1,
          limit: 10,
          offset: 0,
        }),
      ).toEqual([["docs"]]);
      expect(await h.store.listNamespaces({ userId: "jon", prefix: [], suffix: ["b"], limit: 10, offset: 0 })).toEqual([
        ["docs", "b"],
      ]);
      expect(await h.store.listNamespaces({ userId: "nobody", prefix: [], suffix: [], limit: 10, offset: 0 })).toEqual(
        [],
      );
    });
  });

  describe(`${name}: documents`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await setup();
    }, 60_000);

    const version = (sequencer: string, etag = `etag-${sequencer}`) => ({
      documentId: "docs/guide.md",
      source: "guide.md",
      sequencer,
      etag,
    });
    const chunk = (index: number, content: string, headings?: string) => ({
      index,
      content,
      metadata: headings ? { headings } : {},
      embedding: embed(content),
    });

    it("replaces a document's chunks once per event, newest event wins, and lists it by bucket", async () => {
      const long = `${"🦆".repeat(100)}${"x".repeat(100)}`;
      expect(await h.store.replaceDocument(version("0A"), [chunk(0, "Intro."), chunk(1, long, "Guide > Ducks")])).toBe(
        "replaced",
      );
      expect(await h.store.replaceDocument(version("0A"), [chunk(0, "again")])).toBe("stale");
      expect(await h.store.replaceDocument(version("09"), [chunk(0, "older")])).toBe("stale");
      await h.store.replaceDocument({ documentId: "docs2/other.md", source: "other.md", sequencer: "01" }, [
        chunk(0, "another bucket"),
      ]);

      expect(await h.store.documentChunks("docs/guide.md")).toEqual([
        { index: 0, headings: null, preview: "Intro.", chars: 6 },
        { index: 1, headings: "Guide > Ducks", preview: `${"🦆".repeat(100)}${"x".repeat(60)}`, chars: 200 },
      ]);
      expect(await h.store.documentChunks("docs/missing.md")).toEqual([]);
      const [doc, ...others] = await h.store.listDocuments("docs");
      expect(others).toEqual([]);
      expect(doc).toMatchObject({
        documentId: "docs/guide.md",
        source: "guide.md",
        etag: "etag-0A",
        deleted: false,
        chunkCount: 2,
        status: "ingested",
        sequencer: "0A",
      });
      expect(doc!.updatedAt).toMatch(/Z$/);
      expect(await h.store.listDocuments("nowhere")).toEqual([]);
    });

    it("deletes a document's chunks for a newer event only, leaving a tombstone", async () => {
      expect(await h.store.deleteDocument(version("05"))).toBe("stale");
      expect(await h.store.deleteDocument(version("0B"))).toBe("deleted");
      expect(await h.store.documentChunks("docs/guide.md")).toEqual([]);
      expect((await h.store.listDocuments("docs"))[0]).toMatchObject({
        deleted: true,
        chunkCount: 0,
        status: "deleted",
      });
    });

    // An attempt's time gone by: it died.
    const past = new Date(Date.now() - 1000);
    const later = () => new Date(Date.now() + 60_000);

    it("tracks a version's attempts, facts and outcome, and skips a skipped version", async () => {
      expect(await h.store.beginDocument(version("0C"), past)).toEqual({ state: "begin", interrupted: 0 });
      expect(await h.store.beginDocument(version("0C"), past)).toEqual({ state: "begin", interrupted: 1 });
      await h.store.recordDocumentFacts(version("0C"), 5_000_000_000, "application/pdf");
      await h.store.recordDocumentOutcome(version("0C"), "skipped", "too big");
      expect((await h.store.listDocuments("docs"))[0]).toMatchObject({
        status: "skipped",
        reason: "too big",
        statusEtag: "etag-0C",
        sequencer: "0C",
        bytes: 5_000_000_000,
        contentType: "application/pdf",
      });
      expect(await h.store.beginDocument(version("0C"), later())).toEqual({ state: "skipped", reason: "too big" });
      expect(await h.store.beginDocument(version("0B"), later())).toEqual({ state: "stale" });
    });

    it("answers busy to the same content while an attempt holds it, and counts it died once its time is past", async () => {
      expect(await h.store.beginDocument(version("0D", "etag-same"), later())).toEqual({
        state: "begin",
        interrupted: 0,
      });
      // The same bytes under another event (an S3 retry, a local rescan), while the first runs.
      expect(await h.store.beginDocument(version("0E", "etag-same"), later())).toEqual({ state: "busy" });
      expect(await h.store.beginDocument(version("0D", "etag-same"), later())).toEqual({ state: "busy" });
      expect((await h.store.listDocuments("docs"))[0]).toMatchObject({ status: "processing" });
      // Past its time, the next delivery finds an attempt that died.
      await h.store.beginDocument(version("0F", "etag-other"), past);
      expect(await h.store.beginDocument(version("10", "etag-other"), later())).toEqual({
        state: "begin",
        interrupted: 1,
      });
    });

    // PostgREST answers at most max_rows (1,000 on Supabase) and says nothing of the rest.
    it("lists more documents, and previews more chunks, than PostgREST answers in one request", async () => {
      await h.seedDocuments("many", 1_001, 1_001);
      const listed = await h.store.listDocuments("many");
      expect(listed).toHaveLength(1_001);
      expect(new Set(listed.map((d) => d.documentId)).size).toBe(1_001);
      expect(await h.store.getDocument("many/doc-1000")).toMatchObject({
        documentId: "many/doc-1000",
        source: "doc-1000",
      });
      expect(await h.store.getDocument("many/doc-9999")).toBeUndefined();
      const chunks = await h.store.documentChunks("many/doc-0000");
      expect(chunks.map((c) => c.index)).toEqual(Array.from({ length: 1_001 }, (_, i) => i));
    });

    it("holds a skip for the content only when it names the content's ETag", async () => {
      await h.store.beginDocument(version("11", "etag-gone"), later());
      await h.store.recordDocumentOutcome({ ...version("11", "etag-gone"), etag: undefined }, "skipped", "gone");
      // The same event again is skipped; the same bytes under a new event are tried.
      expect(await h.store.beginDocument(version("11", "etag-gone"), later())).toEqual({
        state: "skipped",
        reason: "gone",
      });
      expect(await h.store.beginDocument(version("12", "etag-gone"), later())).toEqual({
        state: "begin",
        interrupted: 0,
      });
    });
  });
}

/**
 * The contract for the store over `transport`, each block on a fresh PGlite with the migrations;
 * every call is held to the store's table of calls, which the signature test checks.
 */
export function agentStoreContractOver(name: string, transport: (db: PGlite) => Rpc) {
  const dbs: PGlite[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
  });
  agentStoreContract(name, async () => {
    const db = await startLocalPostgres();
    dbs.push(db);
    return {
      store: new RpcAgentStore(heldToTable(transport(db), AGENT_STORE_CALLS)),
      seedUserContext: async (userId, plan, usage, preferences) => {
        await db.query("insert into user_context (user_id, plan, usage, preferences) values ($1, $2, $3, $4)", [
          userId,
          plan,
          usage,
          preferences,
        ]);
      },
      seedDocuments: async (bucket, count, chunks) => {
        await db.query(
          `insert into knowledge_documents (document_id, source, sequencer, chunk_count)
           select $1 || '/doc-' || lpad(i::text, 4, '0'), 'doc-' || lpad(i::text, 4, '0'), '01', 0
             from generate_series(0, $2 - 1) as i`,
          [bucket, count],
        );
        await db.query(
          `insert into knowledge_chunks (document_id, source, chunk_index, content, embedding)
           select $1 || '/doc-0000', 'doc-0000', i, 'chunk ' || i, ('[1' || repeat(',0', 1023) || ']')::vector
             from generate_series(0, $2 - 1) as i`,
          [bucket, chunks],
        );
      },
      seedMemories: async (rows) => {
        await db.query(
          `insert into agent_memories (user_id, content, embedding)
           select u, c, e::vector from unnest($1::text[], $2::text[], $3::text[]) as t(u, c, e)`,
          [rows.map((r) => r.userId), rows.map((r) => r.content), rows.map((r) => JSON.stringify(r.embedding))],
        );
      },
    };
  });
}
