import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import * as z from "zod";
import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService, type ChatServiceDeps } from "../../../graph/chat/service";
import { AppError } from "../../../shared/errors";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { OFFLINE_HINT } from "../../../shared/models/offline-rules";
import { failingModel, loopingModel, ScriptedModel } from "../../support/models";
import { backendsHarness } from "../../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

/** A store_memory tool that records who it ran for, as the real one scopes by config. */
function recordingMemoryTool() {
  const calls: { content: string; userId: unknown; projectId: unknown }[] = [];
  const storeMemory = tool(
    async ({ content }, config) => {
      calls.push({ content, userId: config.configurable?.user_id, projectId: config.configurable?.project_id });
      return JSON.stringify({ success: true, memoryId: "m-1", message: `I'll remember that ${content}.` });
    },
    {
      name: "store_memory",
      description: "Stores a fact about the user",
      schema: z.object({ content: z.string() }),
      // what the stand-in knows of a tool: when to call it (the registry's store_memory says the same)
      metadata: { [OFFLINE_HINT]: { trigger: "remember", args: (content: string) => ({ content }), confirms: true } },
    },
  );
  return { storeMemory, calls };
}

const types = (messages: BaseMessage[]) => messages.map((m) => m.getType());

describe("chat graph", () => {
  it("loops agent -> tools -> agent and ends on a plain answer", async () => {
    const { storeMemory, calls } = recordingMemoryTool();
    const graph = buildChatGraph({
      model: new OfflineChatModel({}),
      tools: [storeMemory],
      checkpointer: await harness.checkpointer(),
    });
    const state = await graph.invoke(
      { messages: [new HumanMessage("remember that I prefer email")] },
      { configurable: { thread_id: "loop", user_id: "u-1", project_id: "p-1" } },
    );
    expect(types(state.messages)).toEqual(["human", "ai", "tool", "ai"]);
    expect(state.messages[3]!.content).toBe("Got it. I'll remember that I prefer email.");
    // Scope comes from the run's configuration, never from the model's arguments.
    expect(calls).toEqual([{ content: "I prefer email", userId: "u-1", projectId: "p-1" }]);
  });

  it("keeps exactly one copy of each message: 3 turns leave 3 human messages in the checkpoint", async () => {
    const checkpointer = await harness.checkpointer();
    const graph = buildChatGraph({ model: new OfflineChatModel({}), tools: [], checkpointer });
    for (const text of ["hi", "how are you", "bye"]) {
      await graph.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: "dup" } });
    }
    const tuple = await checkpointer.getTuple({ configurable: { thread_id: "dup" } });
    const messages = tuple!.checkpoint.channel_values.messages as BaseMessage[];
    expect(messages.filter((m) => m.getType() === "human").map((m) => m.content)).toEqual(["hi", "how are you", "bye"]);
    expect(messages).toHaveLength(6);
  });

  it("adds the system prompt at call time and never stores it in the thread", async () => {
    const model = new ScriptedModel(() => new AIMessage("ok"));
    const checkpointer = await harness.checkpointer();
    const graph = buildChatGraph({ model, tools: [recordingMemoryTool().storeMemory], checkpointer });
    await graph.invoke({ messages: [new HumanMessage("one")] }, { configurable: { thread_id: "sys" } });
    await graph.invoke({ messages: [new HumanMessage("two")] }, { configurable: { thread_id: "sys" } });
    expect(types(model.seen[1]!)).toEqual(["system", "human", "ai", "human"]);
    expect(String(model.seen[1]![0]!.content)).toContain("store_memory");
    const tuple = await checkpointer.getTuple({ configurable: { thread_id: "sys" } });
    expect(types(tuple!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["human", "ai", "human", "ai"]);
  });
});

describe("chat service errors", () => {
  const service = async (
    model: ScriptedModel,
    tools = [recordingMemoryTool().storeMemory],
    extras: Partial<ChatServiceDeps> = {},
  ) => {
    const { checkpointer, owners } = await harness.stateTables();
    return new ChatService({
      graph: buildChatGraph({ model, tools, checkpointer }),
      owners,
      conversations: harness.conversations,
      recursionLimit: 6,
      ...extras,
    });
  };

  it("stops a run that never ends at the recursion limit with a clear error, saving nothing", async () => {
    const chat = await service(loopingModel("store_memory"));
    const err = await chat.reply({ userId: "u", message: "go" }).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      status: 500,
      code: "agent_step_limit",
      message: "the agent did not finish within 6 steps",
    });
  });

  it("maps Bedrock throttling to 503 and other model failures to 502", async () => {
    await expect(
      (await service(failingModel("ThrottlingException"))).reply({ userId: "u", message: "hi" }),
    ).rejects.toMatchObject({
      status: 503,
      code: "model_unavailable",
    });
    await expect(
      (await service(failingModel("ValidationException"))).reply({ userId: "u", message: "hi" }),
    ).rejects.toMatchObject({
      status: 502,
      code: "model_error",
    });
  });

  it("reports a session of another user as not found, and an unknown one the same way", async () => {
    const chat = await service(new ScriptedModel(() => new AIMessage("hello")));
    const first = await chat.reply({ userId: "alice", message: "hi" });
    await expect(chat.reply({ userId: "mallory", sessionId: first.sessionId, message: "hi" })).rejects.toMatchObject({
      status: 404,
      code: "session_not_found",
    });
    await expect(
      chat.reply({ userId: "alice", sessionId: "6f9619ff-8b86-4011-b42d-00cf4fc964ff", message: "hi" }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const saved = await harness.conversations.get(first.sessionId);
    expect(saved?.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "hello"],
    ]);
  });
});

describe("hand-off for memory extraction", () => {
  const service = async (extras: Partial<ChatServiceDeps>) => {
    const { checkpointer, owners } = await harness.stateTables();
    return new ChatService({
      graph: buildChatGraph({
        model: new ScriptedModel(() => new AIMessage({ id: "ai-1", content: "Nice!" })),
        tools: [],
        checkpointer,
      }),
      owners,
      conversations: harness.conversations,
      recursionLimit: 6,
      ...extras,
    });
  };

  it("queues one message per turn after the reply is saved", async () => {
    const published: unknown[] = [];
    const chat = await service({ extractionQueue: { publish: async (m) => void published.push(m) } });
    const before = Date.now();
    const reply = await chat.reply({ userId: "u1", projectId: "p1", message: "I prefer tea" });
    expect(published).toEqual([
      {
        user_id: "u1",
        project_id: "p1",
        session_id: reply.sessionId,
        turn_id: "ai-1",
        user_message: "I prefer tea",
        assistant_reply: "Nice!",
        turn_at: expect.any(String),
      },
    ]);
    // When the turn began: an erasure's tombstone refuses the memories of turns before it only.
    const turnAt = Date.parse((published[0] as { turn_at: string }).turn_at);
    expect(turnAt).toBeGreaterThanOrEqual(before);
    expect(turnAt).toBeLessThanOrEqual(Date.now());
  });

  it("still replies when the queue refuses the message, and reports the failure", async () => {
    const failures: unknown[] = [];
    const chat = await service({
      extractionQueue: {
        publish: async () => {
          throw new Error("SQS unavailable");
        },
      },
      onExtractionPublishFailure: (err) => failures.push(err),
    });
    await expect(chat.reply({ userId: "u1", message: "I prefer tea" })).resolves.toMatchObject({ reply: "Nice!" });
    expect(failures).toHaveLength(1);
  });
});
