import { Metrics } from "@aws-lambda-powertools/metrics";
import { createChatHandler } from "../../functions/chat";
import { loadConfig } from "../../shared/config";
import { chatEvent, context } from "../support/events";

describe("chat metrics", () => {
  it("count the reply and its tool calls, record each model call's latency and sum the turn's tokens", async () => {
    const added: [string, string, number][] = [];
    const spy = vi.spyOn(Metrics.prototype, "addMetric").mockImplementation(function (
      this: Metrics,
      name,
      unit,
      value,
    ) {
      added.push([name, unit, value]);
      return this;
    });
    const trace = [
      { type: "node", name: "agent", started_at: 1, duration_ms: 5 },
      {
        type: "model",
        name: "m",
        started_at: 1,
        duration_ms: 120,
        usage: { input_tokens: 1500, output_tokens: 20, cache_read_tokens: 1200, cache_write_tokens: 0 },
      },
      { type: "tool", name: "recall_memory", started_at: 2, duration_ms: 9 },
      { type: "tool", name: "search_knowledge_base", started_at: 2, duration_ms: 11 },
      {
        type: "model",
        name: "m",
        started_at: 3,
        duration_ms: 80,
        usage: { input_tokens: 2600, output_tokens: 90, cache_read_tokens: 1490, cache_write_tokens: 1100 },
      },
    ];
    const handler = createChatHandler(
      loadConfig({ AUTH_MODE: "local" }),
      async () =>
        ({
          chat: { reply: async () => ({ reply: "ok", sessionId: "s", messageId: "m", trace }) },
        }) as never,
    );
    expect((await handler(chatEvent({ message: "hi" }), context()))!.statusCode).toBe(200);
    expect(added).toEqual([
      ["Replies", "Count", 1],
      ["ToolCalls", "Count", 2],
      ["ModelLatency", "Milliseconds", 120],
      ["ModelLatency", "Milliseconds", 80],
      ["InputTokens", "Count", 4100],
      ["OutputTokens", "Count", 110],
      ["CacheReadTokens", "Count", 2690],
      ["CacheWriteTokens", "Count", 1100],
    ]);
    spy.mockRestore();
  });
});
