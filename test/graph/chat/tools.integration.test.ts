import type { PGlite } from "@electric-sql/pglite";
import { chatTools } from "../../../graph/tools/registry";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import type { AgentStore } from "../../../shared/stores/agent-store";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";

let db: PGlite;
let store: RpcAgentStore;
beforeAll(async () => {
  db = await startLocalPostgres();
  store = new RpcAgentStore(sqlRpc(db));
}, 60_000);
afterAll(() => db.close());

const embeddings = new HashingEmbeddings(1024);
const toolsFor = (s: AgentStore, onError?: (tool: string, err: unknown) => void) =>
  Object.fromEntries(chatTools({ store: s, embeddings, minMemoryScore: 0.3, onError }).map((t) => [t.name, t]));
const as = (userId: string, projectId?: string) => ({
  configurable: { user_id: userId, project_id: projectId, session_id: "s" },
});
const run = async (tool: { invoke: (...a: any[]) => Promise<unknown> }, args: unknown, config: unknown) =>
  JSON.parse(String(await tool.invoke(args, config)));

describe("memory tools are scoped by the run, not by the model", () => {
  it("stores for the configured user and recalls only for them", async () => {
    const t = toolsFor(store);
    const stored = await run(
      t.store_memory!,
      { content: "my favourite colour is teal", metadata: { category: "preference" } },
      as("u1"),
    );
    expect(stored).toMatchObject({
      success: true,
      memoryId: expect.any(String),
      message: "I'll remember that my favourite colour is teal.",
    });
    const again = await run(t.store_memory!, { content: "My favourite colour is teal" }, as("u1"));
    expect(again).toMatchObject({ success: true, memoryId: stored.memoryId });

    const mine = await run(t.recall_memory!, { query: "what is my favourite colour?" }, as("u1"));
    expect(mine.success).toBe(true);
    expect(mine.results[0]).toMatchObject({
      content: "my favourite colour is teal",
      memoryId: stored.memoryId,
      metadata: { category: "preference" },
    });
    expect(mine.results[0].score).toBeGreaterThan(0.3);

    const theirs = await run(t.recall_memory!, { query: "what is my favourite colour?" }, as("u2"));
    expect(theirs).toEqual({ success: true, results: [], message: "No matching memories." });
  });

  it("ignores a user or project the model puts in the arguments", async () => {
    const t = toolsFor(store);
    await run(t.store_memory!, { content: "u3 keeps a secret diary" }, as("u3"));
    const spoofed = await run(t.recall_memory!, { query: "secret diary", user_id: "u3", userId: "u3" }, as("u4"));
    expect(spoofed.results).toEqual([]);
    await run(t.store_memory!, { content: "written by u4", user_id: "u3" }, as("u4"));
    const u3 = await store.listMemories("u3", { limit: 10 });
    expect(u3.map((m) => m.content)).toEqual(["u3 keeps a secret diary"]);
  });

  it("scopes by the run's project", async () => {
    const t = toolsFor(store);
    await run(t.store_memory!, { content: "the launch codename is Falcon" }, as("u5", "apollo"));
    expect((await run(t.recall_memory!, { query: "launch codename" }, as("u5", "apollo"))).results).toHaveLength(1);
    expect((await run(t.recall_memory!, { query: "launch codename" }, as("u5", "gemini"))).results).toHaveLength(0);
    expect((await run(t.recall_memory!, { query: "launch codename" }, as("u5"))).results).toHaveLength(0);
  });

  it("summarises the user's context, or says none is known", async () => {
    await db.query(
      "insert into user_context (user_id, plan, usage, preferences) values ('u6', 'Team', '{\"seats\": 8}', '{\"tone\": \"brief\"}')",
    );
    const t = toolsFor(store);
    expect(await run(t.get_user_context!, {}, as("u6"))).toEqual({
      success: true,
      summary: "Plan: Team. Usage: seats 8. Preferences: tone brief.",
    });
    expect((await run(t.get_user_context!, {}, as("u7"))).summary).toBe(
      "Nothing is known about this user's plan, usage or preferences.",
    );
  });

  it("returns knowledge as source, content and score", async () => {
    const content = "Refunds are issued within 30 days of purchase.";
    await db.query(
      "insert into knowledge_chunks (document_id, source, chunk_index, content, embedding) values ('b/refunds.md', 'refunds.md', 0, $1, $2::vector)",
      [content, `[${embeddings.embed(content).join(",")}]`],
    );
    const out = await run(toolsFor(store).search_knowledge_base!, { query: "how long do refunds take?" }, as("u1"));
    expect(out.results).toEqual([{ source: "refunds.md", content, score: expect.any(Number) }]);
  });
});

describe("a failing store", () => {
  const failing = new Proxy({} as AgentStore, {
    get: () => async () => {
      throw new Error("connect ECONNREFUSED 10.0.0.1:5432");
    },
  });

  it("gives every tool a friendly success:false and reports the cause", async () => {
    const errors: string[] = [];
    const t = toolsFor(failing, (tool, err) => errors.push(`${tool}: ${(err as Error).message}`));
    expect(await run(t.store_memory!, { content: "x" }, as("u1"))).toEqual({
      success: false,
      error: "Memory is unavailable right now, so nothing was saved or recalled. Please try again later.",
    });
    expect((await run(t.recall_memory!, { query: "x" }, as("u1"))).success).toBe(false);
    expect((await run(t.get_user_context!, {}, as("u1"))).success).toBe(false);
    expect((await run(t.search_knowledge_base!, { query: "x" }, as("u1"))).error).toMatch(
      /knowledge base is unavailable/,
    );
    expect(errors).toHaveLength(4);
    expect(errors[0]).toBe("store_memory: connect ECONNREFUSED 10.0.0.1:5432");
  });
});
