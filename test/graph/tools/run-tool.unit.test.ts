import { searchKnowledge } from "../../../graph/tools/knowledge-search";
import { runTool, type ToolContext } from "../../../graph/tools/tool";

// runTool is where every caller's arguments meet a tool: the chat agent's (LangChain checks them
// against the schema first), and the support agent's planner (which calls runTool directly).

const context = (searched: unknown[], errors: unknown[]) =>
  ({
    scope: { userId: "u", projectId: null, sessionId: null },
    deps: {
      minMemoryScore: 0,
      embeddings: { embedQuery: async () => [0.1, 0.2] },
      store: {
        matchKnowledge: async (q: unknown) => {
          searched.push(q);
          return [{ source: "refunds.md", content: "Refunds within 14 days.", similarity: 0.9 }];
        },
      },
      onError: (_tool: string, err: unknown) => void errors.push(err),
    },
  }) as unknown as ToolContext;

describe("running a tool", () => {
  it.each([
    ["a query over its 1,000 characters", { query: "x".repeat(5000) }],
    ["a NUL", { query: "refunds\u0000" }],
    ["a lone surrogate", { query: "refunds \ud800" }],
    ["a limit over 10", { query: "refunds", limit: 100_000 }],
    ["a limit of the wrong type", { query: "refunds", limit: "all" }],
    ["a blank query", { query: "   " }],
  ])("refuses %s with what was wrong, before the tool touches anything", async (_, args) => {
    const searched: unknown[] = [];
    const errors: unknown[] = [];
    const out = await runTool(searchKnowledge, args, context(searched, errors));
    expect(out).toMatchObject({
      success: false,
      error: expect.stringMatching(/^invalid arguments for search_knowledge_base: /),
    });
    expect(searched).toEqual([]);
    // Not a backend failure: nothing to report as the store being down.
    expect(errors).toEqual([]);
  });

  it("runs on the arguments as the schema reads them", async () => {
    const searched: unknown[] = [];
    const out = await runTool(searchKnowledge, { query: "  refunds  " }, context(searched, []));
    expect(out).toMatchObject({ success: true });
    expect(searched).toEqual([expect.objectContaining({ text: "refunds", limit: 5 })]);
  });
});
