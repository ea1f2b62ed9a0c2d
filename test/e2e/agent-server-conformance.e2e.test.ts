import { Client, type Checkpoint, type ThreadState } from "@langchain/langgraph-sdk";
import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import { randomUUID } from "node:crypto";
import { freshUser, sharedLocalStack } from "../support/local-stack";

// The Agent Server API as LangGraph's own clients meet it, modelled on the assertions of LangGraph's
// server test suite (libs/langgraph-api/tests/api.test.mts in langgraphjs), driven by the real SDK
// Client against the local stack. Where that suite names its own test graphs, these tests use the
// chat graph (agent -> tools -> agent) and the offline stand-in model's deterministic answers.
// Every user is fresh: each test starts with no threads, assistants or store items of its own.

const local = sharedLocalStack();

type Msg = { type: string; content: unknown; id?: string; tool_calls?: unknown[] };
type Values = { messages: Msg[] };

const clientFor = (user = freshUser("conformance")) =>
  new Client({ apiUrl: local.stack.url, defaultHeaders: { "x-user-id": user }, callerOptions: { maxRetries: 0 } });
const human = (content: string, id?: string) => ({ messages: [{ type: "human", content, ...(id ? { id } : {}) }] });
const contents = (state: { values: unknown }) => (state.values as Values).messages.map((m) => m.content);
/** The default assistant of a graph, as LangGraph derives its id (its server's NAMESPACE_GRAPH). */
const defaultAssistantId = (graphId: string) => uuid5(graphId, "6ba7b821-9dad-11d1-80b4-00c04fd430c8");
const gather = async <T>(stream: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
};

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
      headers: { "x-user-id": user, "content-type": "application/json", origin: "https://ui.example.com" },
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

describe("CORS for browser clients (Agent Chat UI)", () => {
  const origin = "https://agentchat.example.com";

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
