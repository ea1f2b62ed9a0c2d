import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { createSessionsHandler } from "../../../functions/sessions";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { buildChatGraph } from "../../../graph/chat/graph";
import { buildChatRuntime } from "../../../graph/chat/runtime";
import { loadConfig } from "../../../shared/config";
import type { TraceStep } from "../../../shared/stores/conversations";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { prose } from "../../support/conversation";
import { apiEvent, context } from "../../support/events";
import { backendsHarness } from "../../support/stack";

// Long sessions with the offline stand-in, whose context window (counted by the rule in
// shared/models/token-estimate.ts) makes the failure Bedrock would give visible locally.
let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

const filler = (turn: number) => `Note ${turn}: ${prose(turn, 400)}`;

describe("a conversation longer than the model's window", () => {
  it("fails with Bedrock's 'Input is too long' without the budget, and runs on with it", async () => {
    const model = new OfflineChatModel({ contextWindow: 3000 });
    const unbounded = buildChatGraph({ model, tools: [], checkpointer: new MemorySaver() });
    const bounded = buildChatGraph({
      model,
      tools: [],
      checkpointer: new MemorySaver(),
      context: { budget: 2000, summarizer: model },
    });
    let failedAt: number | undefined;
    for (let turn = 1; turn <= 40 && failedAt === undefined; turn++) {
      try {
        await unbounded.invoke({ messages: [new HumanMessage(filler(turn))] }, { configurable: { thread_id: "u" } });
      } catch (err) {
        expect((err as Error).message).toMatch(/Input is too long/);
        expect(((err as Error).cause as { name?: string })?.name).toBe("ValidationException");
        failedAt = turn;
      }
    }
    expect(failedAt).toBeGreaterThan(3);
    expect(failedAt).toBeLessThan(40);

    for (let turn = 1; turn <= 40; turn++) {
      await bounded.invoke({ messages: [new HumanMessage(filler(turn))] }, { configurable: { thread_id: "b" } });
    }
    const state = await bounded.getState({ configurable: { thread_id: "b" } });
    const messages = state.values.messages as BaseMessage[];
    // The state holds the working window, not the transcript, and starts with a user message.
    expect(messages.length).toBeLessThan(20);
    expect(messages[0]!.getType()).toBe("human");
    expect(messages.at(-1)!.content).toMatch(/Note 40/);
    expect(state.values.summary).toMatch(/^- The user said: "Note 1:/);
  });

  it("keeps the whole transcript for the API and still answers about the first turn", async () => {
    const { tableName } = await harness.stateTables();
    const config = loadConfig({ AUTH_MODE: "local", CHECKPOINT_TABLE: tableName, CONTEXT_TOKEN_BUDGET: "2000" });
    const runtime = await buildChatRuntime({
      config,
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
      store: harness.store,
    });
    const first = "remember that my dog is called Biscuit";
    const { sessionId } = await runtime.chat.reply({ userId: "long", message: first });
    const sent = [first];
    for (let turn = 2; turn <= 25; turn++) {
      sent.push(filler(turn));
      await runtime.chat.reply({ userId: "long", sessionId, message: filler(turn) });
    }

    // The graph state, as the saver holds it: the working window and the summary.
    const tuple = await new DynamoDBSaver({ client: harness.dynamo.client, tableName }).getTuple({
      configurable: { thread_id: sessionId },
    });
    const values = tuple!.checkpoint.channel_values as { messages: BaseMessage[]; summary: string };
    expect(values.messages.map((m) => String(m.content))).not.toContain(first);
    expect(values.messages.length).toBeLessThan(20);
    expect(values.summary).toContain(first);

    const answer = await runtime.chat.reply({ userId: "long", sessionId, message: "what is my dog called?" });
    expect(answer.reply).toMatch(/Biscuit/);
    // ?trace=1's model steps carry each call's tokens.
    const calls = answer.trace.filter((s) => s.type === "model");
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls)
      expect(call.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    sent.push("what is my dog called?");

    const handler = createSessionsHandler(() => ({
      config,
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
    }));
    const event = apiEvent({
      method: "GET",
      resource: "/api/sessions/{id}/messages",
      path: `/api/sessions/${sessionId}/messages`,
      pathParameters: { id: sessionId },
      headers: { "x-user-id": "long" },
    });
    const res = await handler({ ...event, queryStringParameters: { trace: "1" } }, context());
    const history = JSON.parse(res!.body) as { role: string; content: string; trace?: TraceStep[] }[];
    expect(history).toHaveLength(2 * sent.length);
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(sent);
    expect(history.map((m) => m.role)).toEqual(sent.flatMap(() => ["user", "assistant"]));
    // ?trace=1: each model call of the last reply with its input and output tokens.
    const lastCalls = history.at(-1)!.trace!.filter((s) => s.type === "model");
    expect(lastCalls.length).toBeGreaterThanOrEqual(2);
    for (const call of lastCalls) {
      expect(call.usage!.input_tokens).toBeGreaterThan(0);
      expect(call.usage!.output_tokens).toBeGreaterThan(0);
    }
  }, 120_000);
});
