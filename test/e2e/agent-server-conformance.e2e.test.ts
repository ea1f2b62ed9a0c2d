import type { Checkpoint, Client, ThreadState } from "@langchain/langgraph-sdk";
import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import { randomUUID } from "node:crypto";
import { freshUser, sharedLocalStack } from "../support/local-stack";
import { sdkClient } from "../support/sdk";

// The Agent Server API as LangGraph's own clients meet it, modelled on the assertions of LangGraph's
// server test suite (libs/langgraph-api/tests/api.test.mts in langgraphjs), driven by the real SDK
// Client against the local stack. Where that suite names its own test graphs, these tests use the
// chat graph (agent -> tools -> agent) and the offline stand-in model's deterministic answers.
// Every user is fresh: each test starts with no threads, assistants or store items of its own.

const local = sharedLocalStack();

type Msg = { type: string; content: unknown; id?: string; tool_calls?: unknown[] };
type Values = { messages: Msg[] };

const clientFor = (user = freshUser("conformance")) => sdkClient(local.stack, user);
const human = (content: string, id?: string) => ({ messages: [{ type: "human", content, ...(id ? { id } : {}) }] });
const contents = (state: { values: unknown }) => (state.values as Values).messages.map((m) => m.content);
/** The default assistant of a graph, as LangGraph derives its id (its server's NAMESPACE_GRAPH). */
const defaultAssistantId = (graphId: string) => uuid5(graphId, "6ba7b821-9dad-11d1-80b4-00c04fd430c8");
const gather = async <T>(stream: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
};

describe("assistants", () => {
  it("create, read, update, delete", async () => {
    const client = clientFor();
    const config = { configurable: { model_name: "gpt" } };
    let made = await client.assistants.create({ graphId: "chat", config, description: "foo" });
    expect(made).toMatchObject({ graph_id: "chat", config, description: "foo", version: 1 });
    const metadata = { name: "woof" };
    await client.assistants.update(made.assistant_id, { graphId: "chat", metadata, description: "bar" });
    made = await client.assistants.get(made.assistant_id);
    expect(made).toMatchObject({ graph_id: "chat", config, metadata, description: "bar", version: 2 });
    // Nobody else's.
    const other = clientFor();
    await expect(other.assistants.get(made.assistant_id)).rejects.toMatchObject({ status: 404 });
    await expect(other.assistants.update(made.assistant_id, { metadata: {} })).rejects.toMatchObject({ status: 404 });
    await expect(other.assistants.delete(made.assistant_id)).rejects.toMatchObject({ status: 404 });
    // Assistants are each user's own: the same id in another user's request makes theirs, not a clash.
    const theirs = await other.assistants.create({ assistantId: made.assistant_id, graphId: "chat", name: "theirs" });
    expect(theirs.assistant_id).toBe(made.assistant_id);
    expect((await client.assistants.get(made.assistant_id)).description).toBe("bar");

    await client.assistants.delete(made.assistant_id);
    await expect(client.assistants.get(made.assistant_id)).rejects.toThrow('HTTP 404: {"detail":"Assistant not found"');
  });

  it("deletes an assistant with its threads", async () => {
    const client = clientFor();
    const made = await client.assistants.create({ graphId: "chat", description: "foo" });
    const thread = await client.threads.create({ metadata: { name: "test_thread", assistant_id: made.assistant_id } });
    const kept = await client.threads.create();
    await client.assistants.delete(made.assistant_id, { deleteThreads: true });
    await expect(client.assistants.get(made.assistant_id)).rejects.toThrow("HTTP 404");
    await expect(client.threads.get(thread.thread_id)).rejects.toThrow(`Thread with ID ${thread.thread_id} not found`);
    expect((await client.threads.get(kept.thread_id)).thread_id).toBe(kept.thread_id);
  });

  it("lists, searches (names in any case), counts and pages assistants", async () => {
    const user = freshUser("assistants");
    const client = clientFor(user);
    expect((await client.assistants.search()).map((a) => a.graph_id).sort()).toEqual(["chat", "support"]);
    const made = await client.assistants.create({ graphId: "chat", name: "Travel Planner" });
    expect(await client.assistants.search()).toHaveLength(3);
    const chats = await client.assistants.search({ graphId: "chat" });
    expect(chats).toHaveLength(2);
    expect(chats.every((a) => a.graph_id === "chat")).toBe(true);
    const system = await client.assistants.search({ metadata: { created_by: "system" } });
    expect(system.map((a) => a.assistant_id)).not.toContain(made.assistant_id);
    for (const part of ["TRAVEL", "planner", "vel Pl"])
      expect((await client.assistants.search({ name: part })).map((a) => a.assistant_id)).toEqual([made.assistant_id]);
    expect((await client.assistants.search({ name: "CHA" })).map((a) => a.name)).toEqual(["chat"]);
    expect(await client.assistants.count()).toBe(3);
    expect(await client.assistants.count({ graphId: "chat" })).toBe(2);
    const page = await fetch(`${local.stack.url}/assistants/search`, {
      method: "POST",
      headers: { "x-user-id": user, "content-type": "application/json" },
      body: JSON.stringify({ limit: 2 }),
    });
    expect(page.headers.get("x-pagination-total")).toBe("3");
  });

  it("versions: each update makes one, newest first, with limit, offset and a metadata filter", async () => {
    const client = clientFor();
    const made = await client.assistants.create({ graphId: "chat" });
    expect(await client.assistants.getVersions(made.assistant_id)).toMatchObject([{ version: 1 }]);
    await client.assistants.update(made.assistant_id, { config: { configurable: { foo: "bar" } } });
    expect(await client.assistants.getVersions(made.assistant_id)).toMatchObject([
      { version: 2, config: { configurable: { foo: "bar" } } },
      { version: 1 },
    ]);
    expect(await client.assistants.getVersions(made.assistant_id, { limit: 1 })).toMatchObject([{ version: 2 }]);
    expect(await client.assistants.getVersions(made.assistant_id, { offset: 1 })).toMatchObject([{ version: 1 }]);
    await client.assistants.update(made.assistant_id, { metadata: { foo: "baz" } });
    expect(await client.assistants.getVersions(made.assistant_id, { metadata: { foo: "baz" } })).toMatchObject([
      { version: 3 },
    ]);
    await client.assistants.update(made.assistant_id, {});
    expect((await client.assistants.getVersions(made.assistant_id)).map((v) => v.version)).toEqual([4, 3, 2, 1]);
    await client.assistants.delete(made.assistant_id);
    await expect(client.assistants.getVersions(made.assistant_id)).rejects.toThrow("HTTP 404");
  });

  it("set latest: an earlier version becomes current; the next update is a new version still", async () => {
    const client = clientFor();
    const made = await client.assistants.create({ graphId: "chat" });
    expect((await client.assistants.update(made.assistant_id, {})).version).toBe(2);
    expect((await client.assistants.setLatest(made.assistant_id, 1)).version).toBe(1);
    expect((await client.assistants.get(made.assistant_id)).version).toBe(1);
    expect((await client.assistants.update(made.assistant_id, {})).version).toBe(3);
    await expect(client.assistants.setLatest(made.assistant_id, 4)).rejects.toMatchObject({ status: 404 });
  });

  it("names the graph's own assistant by LangGraph's uuid5, and keeps it read-only", async () => {
    const client = clientFor();
    const chat = await client.assistants.get("chat");
    expect(chat).toMatchObject({
      assistant_id: defaultAssistantId("chat"),
      name: "chat",
      metadata: { created_by: "system" },
    });
    expect(await client.assistants.get(defaultAssistantId("chat"))).toEqual(chat);
    await expect(client.assistants.update("chat", { metadata: { mine: true } })).rejects.toMatchObject({ status: 409 });
    await expect(client.assistants.delete(chat.assistant_id)).rejects.toMatchObject({ status: 409 });
    await expect(client.assistants.create({ graphId: "nope" })).rejects.toMatchObject({ status: 400 });
    await expect(
      client.assistants.create({ graphId: "chat", config: { configurable: { model: "some-other-model" } } }),
    ).rejects.toMatchObject({ status: 400 });
    const named = await client.assistants.create({ graphId: "chat", name: "woof" });
    expect(named.name).toBe("woof");
    expect(
      (await client.assistants.search({ graphId: "chat", limit: 100 })).filter((a) => a.name === "woof"),
    ).toHaveLength(1);
  });

  it("a run reads its assistant's configuration: the thread names it, and its prompt, settings and approvals apply", async () => {
    const client = clientFor();
    const noMemory = await client.assistants.create({
      graphId: "chat",
      name: "forgetful",
      config: { configurable: { settings: { memory: false } } },
    });
    const thread = await client.threads.create();
    const forgot = (await client.runs.wait(thread.thread_id, noMemory.assistant_id, {
      input: human("remember that my cat is called Tom"),
    })) as Values;
    // Memory is off in its runs: no tool to call, the model says so instead.
    expect(forgot.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect((await client.threads.get(thread.thread_id)).metadata).toMatchObject({
      assistant_id: noMemory.assistant_id,
      graph_id: "chat",
    });
    expect(await client.threads.search({ metadata: { assistant_id: noMemory.assistant_id } })).toHaveLength(1);

    // A new version of it applies from the next run: memory on, each call waiting for approval.
    await client.assistants.update(noMemory.assistant_id, {
      config: { configurable: { approve_tools: ["store_memory"] } },
    });
    const waiting = (await client.runs.wait(thread.thread_id, noMemory.assistant_id, {
      input: human("remember that my dog is called Rex"),
    })) as { __interrupt__?: unknown[] };
    expect(waiting.__interrupt__).toHaveLength(1);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    // Its system prompt is what the model is sent (the stand-in counts its input tokens).
    const inputTokens = async (assistantId: string) => {
      const t = await client.threads.create();
      const updates = await gather(
        client.runs.stream(t.thread_id, assistantId, { input: human("hi"), streamMode: "updates" }),
      );
      const agent = updates.find((e) => e.event === "updates" && "agent" in (e.data as object))!.data as {
        agent: { messages: { usage_metadata: { input_tokens: number } }[] };
      };
      return agent.agent.messages[0]!.usage_metadata.input_tokens;
    };
    const verbose = await client.assistants.create({
      graphId: "chat",
      config: { configurable: { system_prompt: `You are a travel planner. ${"Be precise. ".repeat(200)}` } },
    });
    expect((await inputTokens(verbose.assistant_id)) - (await inputTokens("chat"))).toBeGreaterThan(300);
  });
});

describe("threads", () => {
  it("create, read, update, delete thread", async () => {
    const client = clientFor();
    const metadata = { name: "test_thread" };
    const one = await client.threads.create({ metadata });
    expect(one.metadata).toEqual(metadata);
    expect(one).toMatchObject({ status: "idle", values: null, interrupts: {} });
    expect((await client.threads.get(one.thread_id)).metadata).toEqual(metadata);

    await client.threads.update(one.thread_id, { metadata: { modified: true } });
    expect((await client.threads.get(one.thread_id)).metadata).toEqual({ ...metadata, modified: true });

    const two = await client.threads.create({ metadata: { name: "another_thread" } });
    expect((await client.threads.search()).map((t) => t.thread_id)).toEqual([two.thread_id, one.thread_id]);
    expect((await client.threads.search({ metadata: { modified: true } })).map((t) => t.thread_id)).toEqual([
      one.thread_id,
    ]);

    await client.threads.delete(one.thread_id);
    expect((await client.threads.search()).map((t) => t.thread_id)).toEqual([two.thread_id]);
    // LangGraph's wording, the project's code beside it.
    const gone = client.threads.get(one.thread_id);
    await expect(gone).rejects.toMatchObject({ status: 404 });
    await expect(gone).rejects.toThrow(`Thread with ID ${one.thread_id} not found`);
    await expect(gone).rejects.toThrow('"code":"thread_not_found"');
  });

  it("lists, pages, sorts and counts threads, with the total in X-Pagination-Total", async () => {
    const user = freshUser("lister");
    const client = clientFor(user);
    expect(await client.threads.search()).toEqual([]);
    expect(await client.threads.count()).toBe(0);
    const first = await client.threads.create();
    const second = await client.threads.create({ metadata: { name: "test_thread" } });
    expect((await client.threads.search()).map((t) => t.thread_id)).toEqual([second.thread_id, first.thread_id]);
    expect((await client.threads.search({ offset: 1, limit: 1 })).map((t) => t.thread_id)).toEqual([first.thread_id]);
    expect((await client.threads.search({ sortBy: "created_at", sortOrder: "asc" })).map((t) => t.thread_id)).toEqual([
      first.thread_id,
      second.thread_id,
    ]);
    expect(await client.threads.count()).toBe(2);
    expect(await client.threads.count({ metadata: { name: "test_thread" } })).toBe(1);
    expect(await client.threads.count({ status: "busy" })).toBe(0);

    const page = await fetch(`${local.stack.url}/threads/search`, {
      method: "POST",
      headers: { "x-user-id": user, "content-type": "application/json", origin: "http://localhost:5173" },
      body: JSON.stringify({ limit: 1 }),
    });
    expect(page.headers.get("x-pagination-total")).toBe("2");
    expect(page.headers.get("x-pagination-next")).toBe("1");
    // A browser client may read them.
    expect(page.headers.get("access-control-expose-headers")).toMatch(/x-pagination-total/);
  });

  it("a run names its graph and assistant in the thread's metadata, fills its values and moves updated_at", async () => {
    const client = clientFor();
    const thread = await client.threads.create({ metadata: { topic: "greeting" } });
    const values = (await client.runs.wait(thread.thread_id, "chat", { input: human("hi") })) as Values;
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai"]);

    const after = await client.threads.get<Values>(thread.thread_id);
    expect(after.metadata).toEqual({
      topic: "greeting",
      graph_id: "chat",
      assistant_id: defaultAssistantId("chat"),
    });
    expect(after.status).toBe("idle");
    expect(after.values).toEqual(values);
    expect(after.updated_at > thread.updated_at).toBe(true);
    // Agent Chat UI lists a graph's threads this way, labelled by their first message.
    const listed = await client.threads.search<Values>({ metadata: { graph_id: "chat" } });
    expect(listed.map((t) => t.values.messages[0]!.content)).toEqual(["hi"]);
    expect(await client.threads.search({ metadata: { assistant_id: defaultAssistantId("chat") } })).toHaveLength(1);
  });

  it("copy: the copy holds the whole history, and runs on either leave the other as it was", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo") });
    const state = await client.threads.getState(thread.thread_id);

    const copied = await client.threads.copy(thread.thread_id);
    expect(copied.thread_id).not.toBe(thread.thread_id);
    const copiedState = await client.threads.getState(copied.thread_id);
    const renamed = (c: Checkpoint | null | undefined) => (c ? { ...c, thread_id: copied.thread_id } : null);
    expect(copiedState).toEqual({
      ...state,
      metadata: { ...state.metadata, thread_id: copied.thread_id },
      checkpoint: renamed(state.checkpoint),
      parent_checkpoint: renamed(state.parent_checkpoint),
    });
    const history = await client.threads.getHistory(thread.thread_id);
    const copiedHistory = await client.threads.getHistory(copied.thread_id);
    expect(copiedHistory.map((s) => [s.values, s.next, s.checkpoint.checkpoint_id])).toEqual(
      history.map((s) => [s.values, s.next, s.checkpoint.checkpoint_id]),
    );

    await client.runs.wait(copied.thread_id, "chat", { input: human("bar") });
    expect(contents(await client.threads.getState(copied.thread_id))).toEqual([
      "foo",
      expect.any(String),
      "bar",
      expect.any(String),
    ]);
    expect(await client.threads.getState(thread.thread_id)).toEqual(state);
    // Another user cannot copy it.
    await expect(clientFor().threads.copy(thread.thread_id)).rejects.toMatchObject({ status: 404 });
  });

  it("updateState on a copy replaces a message by its id, and the original stays", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo", "initial-message") });
    const original = await client.threads.getState(thread.thread_id);
    const copy = await client.threads.copy(thread.thread_id);

    const written = await client.threads.updateState(copy.thread_id, {
      values: { messages: [{ type: "human", content: "bar", id: "initial-message" }] },
    });
    const copyState = await client.threads.getState<Values>(copy.thread_id);
    expect((written as { checkpoint: Checkpoint }).checkpoint.checkpoint_id).toBe(copyState.checkpoint.checkpoint_id);
    expect(copyState.values.messages[0]!.content).toBe("bar");
    expect(await client.threads.getState(thread.thread_id)).toEqual(original);
    // The thread's values follow the write.
    expect((await client.threads.get<Values>(copy.thread_id)).values.messages[0]!.content).toBe("bar");
  });

  it("refuses state writes the chat graph cannot take, precisely", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi") });
    const write = (values: unknown, asNode?: string) =>
      client.threads.updateState(thread.thread_id, { values: values as Record<string, unknown>, asNode });
    await expect(write({ keyOne: "value" })).rejects.toMatchObject({ status: 400 });
    await expect(write({ messages: [{ type: "alien", content: "x" }] })).rejects.toMatchObject({ status: 400 });
    await expect(write({ messages: [{ type: "tool", content: "x" }] })).rejects.toMatchObject({ status: 400 });
    await expect(write({ messages: [{ type: "ai", content: "x" }] }, "nowhere")).rejects.toMatchObject({
      status: 400,
    });
    expect(contents(await client.threads.getState(thread.thread_id))).toHaveLength(2);
  });

  it("creates a thread from supersteps: its history replays another's", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const stream = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo"), streamMode: ["updates"] }),
    );
    const history = await client.threads.getHistory(thread.thread_id);
    const clone = await client.threads.create({
      graphId: "chat",
      supersteps: [
        { updates: [{ asNode: "__input__", values: history.at(-2)!.values }] },
        { updates: [{ asNode: "__start__", values: history.at(-2)!.values }] },
        // One superstep per node that wrote something (the chat graph's first step also runs the
        // compaction, which wrote nothing).
        ...stream
          .filter((e) => e.event === "updates")
          .flatMap(({ data }) => Object.entries(data as Record<string, unknown>))
          .filter(([, values]) => values && Object.keys(values).length > 0)
          .map(([asNode, values]) => ({ updates: [{ asNode, values }] })),
      ],
    });
    expect(clone.metadata).toMatchObject({ graph_id: "chat" });
    const cloneHistory = await client.threads.getHistory(clone.thread_id);
    expect(cloneHistory.map(({ next, values }) => ({ next, values }))).toMatchObject(
      history.map(({ next, values }) => ({ next, values })),
    );
    expect((await client.threads.get<Values>(clone.thread_id)).values.messages).toHaveLength(2);
  });

  it("a run with if_not_exists: create makes the thread; anyone else's stays 404", async () => {
    const client = clientFor();
    const threadId = randomUUID();
    await expect(client.runs.wait(threadId, "chat", { input: human("hi") })).rejects.toMatchObject({ status: 404 });
    const values = (await client.runs.wait(threadId, "chat", { input: human("hi"), ifNotExists: "create" })) as Values;
    expect(values.messages).toHaveLength(2);
    expect((await client.threads.get(threadId)).metadata).toMatchObject({ graph_id: "chat" });

    const other = clientFor();
    await expect(
      other.runs.wait(threadId, "chat", { input: human("mine?"), ifNotExists: "create" }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      gather(other.runs.stream(threadId, "chat", { input: human("mine?"), ifNotExists: "create" })),
    ).rejects.toMatchObject({ status: 404 });
    expect(contents(await client.threads.getState(threadId))).toHaveLength(2);
  });

  it("answers LangGraph's statuses and texts for ids that name nothing", async () => {
    const client = clientFor();
    await expect(client.threads.get("not-a-uuid")).rejects.toMatchObject({ status: 400 });
    await expect(client.threads.getState("not-a-uuid")).rejects.toMatchObject({ status: 400 });
    const missing = randomUUID();
    await expect(client.threads.get(missing)).rejects.toThrow(
      `HTTP 404: {"detail":"Thread with ID ${missing} not found"`,
    );
    const thread = await client.threads.create();
    await expect(client.threads.getState(thread.thread_id, "not-a-checkpoint")).rejects.toMatchObject({ status: 400 });
    await expect(client.runs.wait(thread.thread_id, "non-existent", { input: human("hi") })).rejects.toThrow(
      /No assistant found for \\"non-existent\\"/,
    );
    await expect(gather(client.runs.stream(thread.thread_id, "non-existent", { input: human("hi") }))).rejects.toThrow(
      /No assistant found for/,
    );
    await expect(client.assistants.get("non-existent")).rejects.toThrow("HTTP 404");
  });
});

describe("runs", () => {
  it("wait: the thread's values, and the thread idle", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: human("foo", "initial-message"),
    })) as Values;
    expect(Array.isArray(values.messages)).toBe(true);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("wait error: a recursion limit the run passes is GraphRecursionError, and the thread is in error", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await expect(
      client.runs.wait(thread.thread_id, "chat", { input: human("foo"), config: { recursion_limit: 1 } }),
    ).rejects.toThrow(/GraphRecursionError/);
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");
  });

  it("stream values: each chunk extends the last, and the run succeeds", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo", "initial-message"), streamMode: "values" }),
    );
    expect(new Set(chunks.map((c) => c.event))).toEqual(new Set(["metadata", "values"]));
    let previous: string[] = [];
    for (const chunk of chunks.filter((c) => c.event === "values")) {
      const ids = (chunk.data as Values).messages.map((m) => m.id!);
      expect(ids.slice(0, -1)).toEqual(previous);
      previous = ids;
    }
    const runId = (chunks[0]!.data as { run_id: string }).run_id;
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe("success");
    expect((await client.threads.getHistory(thread.thread_id)).length).toBeGreaterThan(1);
  });

  it("stream updates: one per node, agent then tools then agent for a tool call", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", {
        input: human("remember that my cat is called Tom"),
        streamMode: "updates",
      }),
    );
    expect(new Set(chunks.map((c) => c.event))).toEqual(new Set(["metadata", "updates"]));
    const nodes = chunks
      .filter((c) => c.event === "updates")
      .flatMap((c) => Object.keys(c.data as object))
      .filter((n) => n !== "compact");
    expect(nodes).toEqual(["agent", "tools", "agent"]);
  });

  it("stream messages: metadata, partial and complete messages, the last the answer", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo", "initial-message"), streamMode: "messages" }),
    );
    expect(new Set(chunks.map((c) => c.event))).toEqual(
      new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete"]),
    );
    const partial: Record<string, unknown> = {};
    for (const c of chunks.filter((c) => c.event === "messages/partial")) {
      const [m] = c.data as Msg[];
      partial[m!.id!] = m!.content;
    }
    const complete = chunks.filter((c) => c.event === "messages/complete").flatMap((c) => c.data as Msg[]);
    const answer = complete.at(-1)!;
    expect(answer.type).toBe("ai");
    expect(answer.content).toBe(partial[answer.id!]);
    expect(chunks.at(-1)!.event).toBe("messages/complete");
    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages.at(-1)!.content).toBe(answer.content);
  });

  it("stream messages-tuple: token chunks whose metadata names the run", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo"), streamMode: "messages-tuple" }),
    );
    const runId = (chunks[0]!.data as { run_id: string }).run_id;
    expect(new Set(chunks.map((c) => c.event))).toEqual(new Set(["metadata", "messages"]));
    const tuples = chunks.filter((c) => c.event === "messages").map((c) => c.data as [Msg, Record<string, unknown>]);
    expect(tuples.length).toBeGreaterThan(1);
    for (const [, metadata] of tuples)
      expect(metadata).toMatchObject({ run_id: runId, graph_id: "chat", langgraph_node: "agent" });
    const text = tuples.map(([m]) => m.content).join("");
    expect((await client.threads.getState<Values>(thread.thread_id)).values.messages.at(-1)!.content).toBe(text);
  });

  it("stream mixed modes: messages and values, no error", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo"), streamMode: ["messages", "values"] }),
    );
    expect(chunks.at(-1)!.event).toBe("messages/complete");
    expect(chunks.filter((c) => c.event === "error")).toEqual([]);
    expect(new Set(chunks.map((c) => c.event))).toEqual(
      new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete", "values"]),
    );
    expect((chunks.findLast((c) => c.event === "values")!.data as Values).messages).toHaveLength(2);
  });

  it("stream events: the run's callback events", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo"), streamMode: "events" }),
    );
    expect(new Set(chunks.map((c) => c.event))).toEqual(new Set(["metadata", "events"]));
    const kinds = new Set(chunks.filter((c) => c.event === "events").map((c) => (c.data as { event: string }).event));
    for (const kind of [
      "on_chain_start",
      "on_chain_end",
      "on_chat_model_start",
      "on_chat_model_stream",
      "on_chat_model_end",
    ])
      expect(kinds).toContain(kind);
  });

  it("stream debug: its checkpoints are the thread's history", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("foo"), streamMode: "debug" }),
    );
    const checkpoints = chunks
      .filter((c) => c.event === "debug" && (c.data as { type: string }).type === "checkpoint")
      .map((c) => (c.data as { payload: ThreadState }).payload);
    const history = (await client.threads.getHistory(thread.thread_id, { limit: checkpoints.length })).reverse();
    const shape = (s: ThreadState) => ({
      step: (s.metadata as { step?: number } | null)?.step,
      checkpoint: s.checkpoint,
      parent_checkpoint: s.parent_checkpoint,
    });
    expect(checkpoints.map(shape)).toEqual(history.map(shape));
  });

  it("stream tasks and checkpoints: each step's tasks between its checkpoints", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", { input: human("input"), streamMode: ["tasks", "checkpoints"] }),
    );
    expect(chunks[0]).toMatchObject({ event: "metadata", data: { run_id: expect.any(String) } });
    expect(chunks[1]).toMatchObject({
      event: "checkpoints",
      data: { values: { messages: [] }, metadata: { source: "input", step: -1 }, next: ["__start__"] },
    });
    expect(chunks[2]).toMatchObject({
      event: "checkpoints",
      data: { values: { messages: [{ content: "input", type: "human" }] }, metadata: { source: "loop", step: 0 } },
    });
    const agentTasks = chunks.filter((c) => c.event === "tasks" && (c.data as { name: string }).name === "agent");
    expect(agentTasks[0]).toMatchObject({
      data: { name: "agent", input: { messages: [{ content: "input", type: "human" }] }, interrupts: [] },
    });
    expect(agentTasks[1]).toMatchObject({
      data: { name: "agent", result: { messages: [expect.objectContaining({ type: "ai" })] }, interrupts: [] },
    });
    expect(chunks.at(-1)).toMatchObject({ event: "checkpoints", data: { next: [], metadata: { source: "loop" } } });
  });

  it("a run with a checkpoint branches from it: Edit replaces a turn, Regenerate redoes an answer", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi there") });
    await client.runs.wait(thread.thread_id, "chat", { input: human("remember that my cat is called Tom") });
    const history = await client.threads.getHistory<Values>(thread.thread_id, { limit: 100 });
    // Where the second message first appears: the checkpoint before it is its parent.
    const firstSeen = history.findLast((s) => s.values.messages.length === 3)!;
    expect(firstSeen.values.messages[2]!.content).toBe("remember that my cat is called Tom");

    // Edit: a new message from the second message's parent checkpoint.
    await client.runs.wait(thread.thread_id, "chat", {
      input: human("what time is it?"),
      checkpoint: firstSeen.parent_checkpoint!,
    });
    const edited = await client.threads.getState<Values>(thread.thread_id);
    expect(edited.values.messages.map((m) => m.content).slice(0, 3)).toEqual([
      "hi there",
      expect.any(String),
      "what time is it?",
    ]);
    expect(edited.values.messages.map((m) => m.content)).not.toContain("remember that my cat is called Tom");
    expect(edited.parent_checkpoint).not.toBeNull();

    // Regenerate: no input, from the checkpoint that holds the first message but not its answer.
    const before = history.findLast((s) => s.values.messages.length === 1)!;
    // (The chat graph's first step runs the agent beside the compaction.)
    expect(before.next).toContain("agent");
    await client.runs.wait(thread.thread_id, "chat", { input: null, checkpoint: before.checkpoint });
    const regenerated = await client.threads.getState<Values>(thread.thread_id);
    expect(regenerated.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(regenerated.values.messages[0]!.content).toBe("hi there");
    // Every branch stays in the history.
    expect((await client.threads.getHistory(thread.thread_id, { limit: 100 })).length).toBeGreaterThan(history.length);
    // A checkpoint the thread does not have is 404; a run with nothing new on a fresh thread 400.
    await expect(
      client.runs.wait(thread.thread_id, "chat", {
        input: human("x"),
        checkpoint: { ...before.checkpoint, checkpoint_id: randomUUID() },
      }),
    ).rejects.toMatchObject({ status: 404 });
    const fresh = await client.threads.create();
    await expect(client.runs.wait(fresh.thread_id, "chat", { input: null })).rejects.toMatchObject({ status: 400 });
  });

  it("Edit of the first message: a branch from the input checkpoint, whose id is LangGraph's step -1 uuid6", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi there") });
    const history = await client.threads.getHistory<Values>(thread.thread_id, { limit: 100 });
    // Agent Chat UI branches from the parent of the state where the message was first seen.
    const firstSeen = history.findLast((s) => s.values.messages.length === 1)!;
    const from = firstSeen.parent_checkpoint!;
    expect(from.checkpoint_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-ffff-[0-9a-f]{12}$/);
    expect((await client.threads.getState(thread.thread_id, from.checkpoint_id!)).checkpoint).toEqual(from);
    await client.runs.wait(thread.thread_id, "chat", { input: human("hello again, edited"), checkpoint: from });
    expect(contents(await client.threads.getState(thread.thread_id))).toEqual([
      "hello again, edited",
      expect.any(String),
    ]);
  });

  it("the history's metadata filter finds a run's checkpoints", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    expect(await client.threads.getHistory(thread.thread_id)).toHaveLength(0);
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo") });
    const one = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    await client.runs.wait(thread.thread_id, "chat", {
      input: human("bar"),
      metadata: { run_metadata: "run_metadata" },
    });
    const all = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const filtered = await client.threads.getHistory<Values>(thread.thread_id, {
      limit: 100,
      metadata: { run_metadata: "run_metadata" },
    });
    expect(filtered.length).toBe(all.length - one.length);
    expect(filtered.at(-1)!.values.messages).toHaveLength(2);
    expect(filtered[0]!.values.messages).toHaveLength(4);
  });

  it("state by checkpoint: GET by id and POST /state/checkpoint (RemoteGraph.getState) agree", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo") });
    const [latest, earlier] = await client.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(await client.threads.getState(thread.thread_id, earlier!.checkpoint)).toEqual(earlier);
    expect(await client.threads.getState(thread.thread_id, earlier!.checkpoint.checkpoint_id!)).toEqual(earlier);
    expect(await client.threads.getState(thread.thread_id, latest!.checkpoint)).toEqual(latest);
  });

  it("interrupt_before stops the run, the thread interrupted; a run with no input goes on", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo"), interruptBefore: ["agent"] });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.next).toEqual(["agent", "compact"]);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human"]);

    const chunks = await gather(client.runs.stream(thread.thread_id, "chat", { input: null }));
    expect(chunks.filter((c) => c.event === "error")).toEqual([]);
    expect((chunks.findLast((c) => c.event === "values")!.data as Values).messages.map((m) => m.type)).toEqual([
      "human",
      "ai",
    ]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("human in the loop with interrupt_after: the tool call is edited in the state, then the run goes on", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", {
        input: human("remember that my cat is called Tom"),
        interruptAfter: ["agent"],
      }),
    );
    expect(chunks.filter((c) => c.event === "error")).toEqual([]);
    const paused = await client.threads.get<Values>(thread.thread_id);
    expect(paused.status).toBe("interrupted");
    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.next).toEqual(["tools"]);
    expect(state.tasks).toMatchObject([{ id: expect.any(String), name: "tools", error: null, interrupts: [] }]);
    const call = state.values.messages.at(-1)! as Msg & {
      tool_calls: { name: string; args: Record<string, unknown> }[];
    };
    expect(call.tool_calls[0]!.name).toBe("store_memory");

    // The tool call, modified: the same message id, other arguments.
    await client.threads.updateState(thread.thread_id, {
      values: {
        messages: [{ ...call, tool_calls: [{ ...call.tool_calls[0]!, args: { content: "My cat is called Felix" } }] }],
      },
    });
    await client.threads.update(thread.thread_id, { metadata: { modified: true } });
    const modified = await client.threads.get(thread.thread_id);
    expect(modified).toMatchObject({ status: "interrupted", metadata: { modified: true } });

    const resumed = await client.runs.wait(thread.thread_id, "chat", { input: null });
    const messages = (resumed as Values).messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(JSON.stringify(messages[2]!.content)).toContain("Felix");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("command update writes the state; command goto runs a node", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo") });
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", {
        command: { update: { messages: [{ type: "human", content: "and one more thing" }] }, goto: "agent" },
      }),
    );
    expect(chunks.filter((c) => c.event === "error")).toEqual([]);
    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
    expect(state.values.messages[2]!.content).toBe("and one more thing");
    // A key the chat graph does not have is the client's mistake.
    await expect(
      client.runs.wait(thread.thread_id, "chat", { command: { update: { keyOne: "value3" } } }),
    ).rejects.toMatchObject({ status: 400 });
    expect((await client.threads.getState<Values>(thread.thread_id)).values.messages).toHaveLength(4);
  });
});

describe("human in the loop: tools that wait for approval", () => {
  type Hitl = {
    action_requests: { name: string; args: Record<string, unknown>; description: string }[];
    review_configs: { action_name: string; allowed_decisions: string[] }[];
  };
  const approval = { configurable: { approve_tools: ["store_memory"] } };

  /** A run whose tool call waits: the thread interrupted, the request in Agent Chat UI's format. */
  async function paused(client: Client) {
    const thread = await client.threads.create();
    const chunks = await gather(
      client.runs.stream(thread.thread_id, "chat", {
        input: human("remember that my cat is called Tom"),
        config: approval,
        streamMode: ["values"],
      }),
    );
    expect(chunks.filter((c) => c.event === "error")).toEqual([]);
    // useStream reads the interrupt from the last values chunk.
    const last = chunks.findLast((c) => c.event === "values")!.data as { __interrupt__?: { value: Hitl }[] };
    expect(last.__interrupt__).toHaveLength(1);
    const request = last.__interrupt__![0]!.value;
    expect(request).toMatchObject({
      action_requests: [{ name: "store_memory", args: { content: expect.stringContaining("Tom") } }],
      review_configs: [{ action_name: "store_memory", allowed_decisions: ["approve", "edit", "reject"] }],
    });
    const stopped = await client.threads.get<Values>(thread.thread_id);
    expect(stopped.status).toBe("interrupted");
    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.next).toEqual(["tools"]);
    expect(state.tasks).toMatchObject([
      { name: "tools", interrupts: [{ id: expect.any(String), value: { action_requests: expect.any(Array) } }] },
    ]);
    expect(stopped.interrupts).toEqual({ [state.tasks[0]!.id]: state.tasks[0]!.interrupts });
    return { thread, request };
  }

  const resume = (client: Client, threadId: string, decisions: unknown[]) =>
    client.runs.wait(threadId, "chat", { command: { resume: { decisions } }, config: approval }) as Promise<Values>;

  it("approve: the call runs as asked, and the run answers", async () => {
    const client = clientFor();
    const { thread } = await paused(client);
    const values = await resume(client, thread.thread_id, [{ type: "approve" }]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(JSON.stringify(values.messages[2]!.content)).toContain("Tom");
    const after = await client.threads.get(thread.thread_id);
    expect(after).toMatchObject({ status: "idle", interrupts: {} });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it("edit: the call runs with the edited arguments, and the history shows them", async () => {
    const client = clientFor();
    const { thread } = await paused(client);
    const values = await resume(client, thread.thread_id, [
      { type: "edit", edited_action: { name: "store_memory", args: { content: "My cat is called Felix" } } },
    ]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    const call = values.messages[1]! as Msg & { tool_calls: { args: { content: string } }[] };
    expect(call.tool_calls[0]!.args.content).toBe("My cat is called Felix");
    expect(JSON.stringify(values.messages[2]!.content)).toContain("Felix");
    expect(JSON.stringify(values.messages[2]!.content)).not.toContain("Tom");
  });

  it("reject: the call never runs; the model is told, and answers", async () => {
    const client = clientFor();
    const { thread } = await paused(client);
    const values = await resume(client, thread.thread_id, [{ type: "reject", message: "not now" }]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    const answer = JSON.stringify(values.messages[2]!.content);
    expect(answer).toContain("rejected");
    expect(answer).toContain("not now");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a resume that does not answer the request is refused (400) or asked again, and stays answerable", async () => {
    const client = clientFor();
    const { thread, request } = await paused(client);
    // Not a decision list: refused before anything runs.
    for (const resumeValue of [{ decisions: [{ type: "maybe" }] }, "yes", { decisions: "approve" }])
      await expect(
        client.runs.wait(thread.thread_id, "chat", { command: { resume: resumeValue }, config: approval }),
      ).rejects.toMatchObject({ status: 400 });
    // Decisions that do not fit the calls: the run asks again, saying why.
    for (const decisions of [
      [],
      [{ type: "approve" }, { type: "approve" }],
      [{ type: "edit", edited_action: { name: "recall_memory", args: {} } }],
    ]) {
      const again = (await client.runs.wait(thread.thread_id, "chat", {
        command: { resume: { decisions } },
        config: approval,
      })) as { __interrupt__?: { value: Hitl & { error?: string } }[] };
      expect(again.__interrupt__?.[0]?.value).toMatchObject({ ...request, error: expect.any(String) });
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    }
    expect((await resume(client, thread.thread_id, [{ type: "approve" }])).messages).toHaveLength(4);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a new message instead of a decision: tool messages answer the waiting calls first (as Agent Chat UI sends them)", async () => {
    const client = clientFor();
    const { thread } = await paused(client);
    const state = await client.threads.getState<Values>(thread.thread_id);
    const call = (state.values.messages.at(-1) as Msg & { tool_calls: { id: string; name: string }[] }).tool_calls[0]!;
    const answer = { type: "tool", tool_call_id: call.id, name: call.name, content: "Successfully handled tool call." };
    // Only a call the thread left unanswered, and only once.
    await expect(
      client.runs.wait(thread.thread_id, "chat", {
        input: {
          messages: [
            { ...answer, tool_call_id: "no-such-call" },
            { type: "human", content: "never mind" },
          ],
        },
        config: approval,
      }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.runs.wait(thread.thread_id, "chat", {
        input: { messages: [answer, answer, { type: "human", content: "never mind" }] },
        config: approval,
      }),
    ).rejects.toMatchObject({ status: 400 });
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [answer, { type: "human", content: "never mind, thanks" }] },
      config: approval,
    })) as Values;
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "human", "ai"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a session can require approval too: its runs stop, whatever the run asks, until its approvals change", async () => {
    const user = freshUser("careful");
    const client = clientFor(user);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi") });
    const patch = (body: unknown) =>
      fetch(`${local.stack.url}/api/sessions/${thread.thread_id}`, {
        method: "PATCH",
        headers: { "x-user-id": user, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // Nobody else's session, and only tool names or "*".
    expect(
      (
        await fetch(`${local.stack.url}/api/sessions/${thread.thread_id}`, {
          method: "PATCH",
          headers: { "x-user-id": freshUser("other"), "content-type": "application/json" },
          body: JSON.stringify({ approve_tools: [] }),
        })
      ).status,
    ).toBe(404);
    expect((await patch({ approve_tools: "all" })).status).toBe(400);
    const set = await patch({ approve_tools: ["store_memory"] });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ approve_tools: ["store_memory"] });

    const waiting = (await client.runs.wait(thread.thread_id, "chat", {
      input: human("remember that my cat is called Tom"),
    })) as { __interrupt__?: unknown[] };
    expect(waiting.__interrupt__).toHaveLength(1);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const resumed = (await client.runs.wait(thread.thread_id, "chat", {
      command: { resume: { decisions: [{ type: "reject" }] } },
    })) as Values;
    expect(resumed.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai", "tool", "ai"]);

    // /api/chat on the same session stops too, and says so; the Agent Server API resumes it.
    const chat = await fetch(`${local.stack.url}/api/chat`, {
      method: "POST",
      headers: { "x-user-id": user, "content-type": "application/json" },
      body: JSON.stringify({ session_id: thread.thread_id, message: "remember that my fish is called Nemo" }),
    });
    expect(chat.status).toBe(200);
    expect(await chat.json()).toMatchObject({ reply: "", interrupted: true });
    await client.runs.wait(thread.thread_id, "chat", { command: { resume: { decisions: [{ type: "approve" }] } } });

    expect((await patch({ approve_tools: [] })).status).toBe(200);
    const ran = (await client.runs.wait(thread.thread_id, "chat", {
      input: human("remember that my dog is called Rex"),
    })) as Values;
    expect(ran.messages.at(-2)!.type).toBe("tool");
  });

  it("a run without approval configured runs the tool at once", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: human("remember that my cat is called Tom"),
    })) as Values;
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });
});

describe("store", () => {
  it("can put, search, list, get and delete, any JSON value under any namespace", async () => {
    const client = clientFor();
    const namespace = ["allMethods", "data"];
    const key = randomUUID();
    const value = { foo: "bar", nested: { list: [1, 2.5, null, true], text: "émoji 🐈" } };
    expect((await client.store.searchItems(namespace)).items).toHaveLength(0);
    expect((await client.store.listNamespaces()).namespaces).toHaveLength(0);
    expect(await client.store.getItem(namespace, key)).toBeNull();

    await client.store.putItem(namespace, key, value);
    expect((await client.store.getItem(namespace, key))?.value).toEqual(value);
    const afterPut = await client.store.searchItems(namespace);
    expect(afterPut.items).toHaveLength(1);
    expect(afterPut.items[0]).toMatchObject({ key, value, namespace });
    expect(afterPut.items[0]!.createdAt).toBeDefined();

    const updated = { foo: "baz" };
    await client.store.putItem(namespace, key, updated);
    expect((await client.store.getItem(namespace, key))?.value).toEqual(updated);
    const afterUpdate = await client.store.searchItems(namespace);
    expect(afterUpdate.items.map((i) => i.value)).toEqual([updated]);
    expect(new Date(afterUpdate.items[0]!.updatedAt).getTime()).toBeGreaterThan(
      new Date(afterPut.items[0]!.updatedAt).getTime(),
    );
    expect((await client.store.listNamespaces()).namespaces).toEqual([namespace]);

    await client.store.deleteItem(namespace, key);
    expect(await client.store.getItem(namespace, key)).toBeNull();
    expect((await client.store.searchItems(namespace)).items).toHaveLength(0);
  });

  it("keeps each user's items their own: the same namespace is another user's own", async () => {
    const alice = clientFor();
    const bob = clientFor();
    await alice.store.putItem(["shared", "name"], "k", { owner: "alice" });
    expect(await bob.store.getItem(["shared", "name"], "k")).toBeNull();
    expect((await bob.store.searchItems(["shared"])).items).toEqual([]);
    expect((await bob.store.listNamespaces()).namespaces).toEqual([]);
    await bob.store.putItem(["shared", "name"], "k", { owner: "bob" });
    await bob.store.deleteItem(["shared", "name"], "k");
    expect((await alice.store.getItem(["shared", "name"], "k"))?.value).toEqual({ owner: "alice" });
  });

  it("finds items by meaning on their indexed fields, filters them, and lists namespaces by prefix and depth", async () => {
    const client = clientFor();
    await client.store.putItem(["recipes", "italian"], "carbonara", {
      title: "Carbonara",
      text: "pasta with eggs, pecorino and guanciale",
      cuisine: "italian",
    });
    await client.store.putItem(
      ["recipes", "japanese"],
      "ramen",
      { title: "Ramen", text: "noodle soup with broth and chashu pork", cuisine: "japanese" },
      { index: ["text"] },
    );
    await client.store.putItem(
      ["recipes", "japanese"],
      "secret",
      { title: "Secret", text: "noodle soup with broth", cuisine: "japanese" },
      { index: false },
    );
    const soup = await client.store.searchItems(["recipes"], { query: "noodle soup broth" });
    expect(soup.items[0]).toMatchObject({ key: "ramen", score: expect.any(Number) });
    // Put with index: false, it is not found by meaning, only by its namespace.
    expect(soup.items.map((i) => i.key)).not.toContain("secret");
    expect((await client.store.searchItems(["recipes", "japanese"])).items.map((i) => i.key).sort()).toEqual([
      "ramen",
      "secret",
    ]);
    expect(
      (await client.store.searchItems(["recipes"], { filter: { cuisine: "italian" } })).items.map((i) => i.key),
    ).toEqual(["carbonara"]);
    expect((await client.store.listNamespaces({ prefix: ["recipes"] })).namespaces).toEqual([
      ["recipes", "italian"],
      ["recipes", "japanese"],
    ]);
    expect((await client.store.listNamespaces({ maxDepth: 1 })).namespaces).toEqual([["recipes"]]);
    expect((await client.store.listNamespaces({ suffix: ["italian"] })).namespaces).toEqual([["recipes", "italian"]]);
  });

  it("still maps the memories namespace onto the caller's memories, which the agent recalls", async () => {
    const user = freshUser("rememberer");
    const client = clientFor(user);
    await client.store.putItem(["memories", user], "pet", { content: "My dog is called Rex" });
    await client.store.putItem(["notes"], "n1", { content: "not a memory" });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: human("what do you know about my dog?"),
    })) as Values;
    expect(JSON.stringify(values.messages.at(-1)!.content)).toContain("Rex");
    // A memory's value is a memory; the namespaces of both kinds are listed together.
    await expect(client.store.putItem(["memories", user], "bad", { text: "no content" })).rejects.toMatchObject({
      status: 400,
    });
    expect((await client.store.listNamespaces()).namespaces).toEqual([["memories", user], ["notes"]]);
    expect((await client.store.searchItems([], { limit: 10 })).items.map((i) => i.key).sort()).toEqual(["n1", "pet"]);
    // Another user's memories namespace does not exist for anyone else.
    await expect(clientFor().store.getItem(["memories", user], "pet")).rejects.toMatchObject({ status: 404 });
  });

  it("refuses what LangGraph's store refuses", async () => {
    const client = clientFor();
    const put = (body: unknown) =>
      fetch(`${local.stack.url}/store/items`, {
        method: "PUT",
        headers: { "x-user-id": freshUser("raw"), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await put({ namespace: ["a.b"], key: "k", value: {} })).status).toBe(422);
    expect((await put({ namespace: [], key: "k", value: {} })).status).toBe(400);
    expect((await put({ namespace: ["a"], key: "k", value: [1, 2] })).status).toBe(400);
    expect((await put({ namespace: ["a"], key: "k", value: { x: 1 }, ttl: 5 })).status).toBe(400);
    expect((await client.store.searchItems(["nothing", "here"])).items).toEqual([]);
  });
});

describe("CORS for browser clients (Agent Chat UI)", () => {
  // Agent Chat UI as its README runs it, on this machine (the local stack's default allows loopback pages).
  const origin = "http://localhost:3000";

  it("allows x-auth-scheme in a preflight", async () => {
    const response = await fetch(`${local.stack.url}/threads/search`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-api-key,x-auth-scheme",
      },
    });
    expect(response.headers.get("access-control-allow-origin")).toBeTruthy();
    expect(response.headers.get("access-control-allow-headers")).toMatch(/x-auth-scheme/);
  });

  it("marks the gateway's own 404 and 405 for the browser", async () => {
    const unrouted = await fetch(`${local.stack.url}/no/such/route`, { headers: { origin } });
    expect(unrouted.status).toBe(404);
    expect(unrouted.headers.get("access-control-allow-origin")).toBeTruthy();
    const wrongMethod = await fetch(`${local.stack.url}/threads/search`, { method: "PUT", headers: { origin } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("access-control-allow-origin")).toBeTruthy();
  });
});

export type { ThreadState };
