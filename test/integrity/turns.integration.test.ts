import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { buildChatGraph } from "../../graph/chat/graph";
import { ChatService, type ChatServiceDeps } from "../../graph/chat/service";
import { chatTools } from "../../graph/tools/registry";
import { HashingEmbeddings } from "../../shared/models/hashing-embeddings";
import { OfflineChatModel } from "../../shared/models/offline-chat-model";
import type { ConversationStore } from "../../shared/stores/conversations";
import { failingModel, ScriptedModel } from "../support/models";
import { backendsHarness } from "../support/stack";

// Turn integrity, through the chat service on dynalite and PGlite.

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

async function service(
  model: ConstructorParameters<typeof ScriptedModel>[0] | OfflineChatModel | ScriptedModel,
  extra: Partial<ChatServiceDeps> = {},
) {
  const { checkpointer, owners } = await harness.stateTables();
  const chatModel = typeof model === "function" ? new ScriptedModel(model) : model;
  const tools = chatTools({ store: harness.store, embeddings: new HashingEmbeddings(1024), minMemoryScore: 0.3 });
  const graph = buildChatGraph({ model: chatModel, tools, checkpointer });
  const published: { project_id: string | null; user_message: string }[] = [];
  const chat = new ChatService({
    graph,
    owners,
    conversations: harness.conversations,
    recursionLimit: 8,
    extractionQueue: { publish: async (m) => void published.push(m as never) },
    ...extra,
  });
  const stateOf = async (sessionId: string) =>
    ((await graph.getState({ configurable: { thread_id: sessionId } })).values.messages ?? []) as BaseMessage[];
  return { chat, graph, published, stateOf, model: chatModel };
}

describe("A session keeps the project it started in", () => {
  it("refuses another project with 409, and runs a turn naming none in the session's project", async () => {
    const { chat, published } = await service(() => new AIMessage("ok"));
    const { sessionId } = await chat.reply({ userId: "olga", projectId: "atlas", message: "start" });
    await expect(chat.reply({ userId: "olga", sessionId, projectId: "zephyr", message: "peek" })).rejects.toMatchObject(
      {
        status: 409,
        code: "project_mismatch",
      },
    );
    await chat.reply({ userId: "olga", sessionId, message: "no project named" });
    await chat.reply({ userId: "olga", sessionId, projectId: "atlas", message: "same project" });
    expect(published.map((m) => [m.user_message, m.project_id])).toEqual([
      ["start", "atlas"],
      ["no project named", "atlas"],
      ["same project", "atlas"],
    ]);
    const { rows } = await harness.postgres.query<{ project_id: string }>(
      "select project_id from agent_sessions where session_id = $1",
      [sessionId],
    );
    expect(rows).toEqual([{ project_id: "atlas" }]);
  });

  it("keeps a session without a project out of every project, and searches with the session's project", async () => {
    const { chat } = await service(() => new AIMessage("ok"));
    const { sessionId } = await chat.reply({ userId: "pia", message: "no project" });
    await expect(chat.reply({ userId: "pia", sessionId, projectId: "atlas", message: "x" })).rejects.toMatchObject({
      code: "project_mismatch",
    });
    // What the tools are scoped by: the run's configuration, from the session, not the request.
    await harness.store.insertMemory({
      userId: "quinn",
      projectId: "vault",
      content: "The vault code is 1234",
      embedding: (await new HashingEmbeddings(1024).embedDocuments(["The vault code is 1234"]))[0]!,
    });
    const offline = await service(new OfflineChatModel({}));
    const started = await offline.chat.reply({ userId: "quinn", projectId: "lobby", message: "hello" });
    await expect(
      offline.chat.reply({
        userId: "quinn",
        sessionId: started.sessionId,
        projectId: "vault",
        message: "what is the vault code?",
      }),
    ).rejects.toMatchObject({ code: "project_mismatch" });
    const inLobby = await offline.chat.reply({
      userId: "quinn",
      sessionId: started.sessionId,
      message: "what is the vault code?",
    });
    expect(inLobby.reply).not.toContain("1234");
  });
});

describe("A turn is in both the graph state and the transcript, or in neither", () => {
  it("takes the turn back out of the graph state when the transcript cannot be written", async () => {
    let failNext = false;
    const conversations = new Proxy(harness.conversations, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "recordTurn") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (failNext) {
            failNext = false;
            throw new Error("Supabase is down");
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as ConversationStore;
    const model = new ScriptedModel(
      (messages) => new AIMessage(`seen ${messages.filter((m) => m.getType() === "human").length}`),
    );
    const { chat, stateOf } = await service(model, { conversations });
    const { sessionId } = await chat.reply({ userId: "rex", message: "first" });
    failNext = true;
    await expect(chat.reply({ userId: "rex", sessionId, message: "lost in transit" })).rejects.toMatchObject({
      status: 503,
      code: "store_unavailable",
    });
    expect((await stateOf(sessionId)).map((m) => m.content)).toEqual(["first", "seen 1"]);
    const next = await chat.reply({ userId: "rex", sessionId, message: "third" });
    expect(next.reply).toBe("seen 2");
    expect(model.seen.at(-1)!.map((m) => m.content)).not.toContain("lost in transit");
    expect((await harness.conversations.get(sessionId))!.messages.map((m) => m.content)).toEqual([
      "first",
      "seen 1",
      "third",
      "seen 2",
    ]);
  });

  it("takes the turn back out when the model fails, or when a tool loop hits the step limit", async () => {
    const failing = await service(failingModel("ValidationException"));
    let failed: string | undefined;
    const modelErr = await failing.chat
      .reply({ userId: "sam", message: "will fail" }, { onSession: (id) => (failed = id) })
      .catch((e) => e);
    expect(modelErr).toMatchObject({ status: 502, code: "model_error" });
    expect(await failing.stateOf(failed!)).toEqual([]);

    let calls = 0;
    const looping = await service(
      () => new AIMessage({ content: "", tool_calls: [{ id: `c${++calls}`, name: "get_user_context", args: {} }] }),
    );
    let session: string | undefined;
    const loopErr = await looping.chat
      .reply({ userId: "sam", message: "loop forever" }, { onSession: (id) => (session = id) })
      .catch((e) => e);
    expect(loopErr).toMatchObject({ code: "agent_step_limit" });
    expect(await looping.stateOf(session!)).toEqual([]);
    expect(await harness.conversations.get(session!)).toBeUndefined();
  });

  it("stores a model reply holding a lone surrogate or NUL instead of failing after it was streamed", async () => {
    const { chat, stateOf } = await service(() => new AIMessage("half a pair \ud83d and a \u0000 byte"));
    const tokens: string[] = [];
    const result = await chat.reply(
      { userId: "tia", message: "say something odd" },
      { onToken: (t) => tokens.push(t) },
    );
    expect(result.reply).toBe("half a pair \ufffd and a  byte");
    const stored = await harness.conversations.get(result.sessionId);
    expect(stored!.messages.map((m) => m.content)).toEqual(["say something odd", "half a pair \ufffd and a  byte"]);
    expect((await stateOf(result.sessionId)).map((m) => m.getType())).toEqual(["human", "ai"]);
  });

  it("has the offline stand-in cut long text by code point, never inside a surrogate pair", async () => {
    const model = new OfflineChatModel({});
    for (const text of ["🙂".repeat(250), `a${"𝄞".repeat(300)}`, `${"x".repeat(199)}😀😀`]) {
      const reply = String((await model.invoke(text)).content);
      expect(reply).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      expect(reply).toContain("…");
    }
  });
});

describe("A tool's validation error reaches the user as a short explanation", () => {
  it("has the offline stand-in say plainly that an over-long memory was not saved", async () => {
    const { chat } = await service(new OfflineChatModel({}));
    for (const size of [2001, 2500, 6000]) {
      const { reply } = await chat.reply({
        userId: "uma",
        message: `Remember that ${"notes,".repeat(size).slice(0, size)}`,
      });
      expect(reply).toMatch(
        /^I couldn't save that\. store_memory was not run, so nothing was done: content is too long: \d+ characters, and the limit is 2000\.$/,
      );
      expect(reply).not.toMatch(/fix your mistakes|too_big|"code"/i);
    }
    expect(await harness.store.listMemories("uma", { limit: 5 })).toEqual([]);
  });

  it("gives the model a short explanation for any invalid tool input", async () => {
    let call = 0;
    const model = new ScriptedModel(() =>
      ++call % 2 === 1
        ? new AIMessage({
            content: "",
            tool_calls: [
              {
                id: `s${call}`,
                name: "store_memory",
                args: { content: "fine", metadata: { tags: Array(12).fill("t") } },
              },
              { id: `r${call}`, name: "recall_memory", args: { query: "", limit: 99 } },
              { id: `k${call}`, name: "search_knowledge_base", args: { query: 42 } },
            ],
          })
        : new AIMessage("done"),
    );
    const { chat, stateOf } = await service(model);
    const { sessionId } = await chat.reply({ userId: "vic", message: "go" });
    const results = (await stateOf(sessionId))
      .filter((m) => m.getType() === "tool")
      .map((m) => JSON.parse(String(m.content)));
    expect(results.map((r) => r.success)).toEqual([false, false, false]);
    expect(results[0].error).toContain("metadata.tags has 12 items, and the limit is 10");
    expect(results[1].error).toMatch(/query is empty; limit is over the limit of 10/);
    expect(results[2].error).toContain("query must be a string");
    for (const r of results) expect(r.error).not.toMatch(/fix your mistakes|"code"/i);
  });
});
