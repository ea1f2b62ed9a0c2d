import { request } from "node:http";
import { Client } from "@langchain/langgraph-sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";

// The LangGraph Agent Server API, driven by LangGraph's own client against the stack `npm start` runs.
const dataDir = mkdtempSync(join(tmpdir(), "agent-server-e2e-"));
let stack: LocalStack;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT" });
  // Locally the caller names the user (shared/identity.ts); in AWS the authorizer does.
  const as = (user: string) =>
    new Client({ apiUrl: stack.url, defaultHeaders: { "x-user-id": user }, callerOptions: { maxRetries: 0 } });
  alice = as("alice");
  bob = as("bob");
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type Msg = { type: string; content: unknown; id?: string };

describe("Agent Server API with @langchain/langgraph-sdk's Client", () => {
  it("answers /ok and /info, and lists the chat and support assistants", async () => {
    expect(await (await fetch(`${stack.url}/ok`)).json()).toEqual({ ok: true });
    expect((await fetch(`${stack.url}/info`)).status).toBe(200);
    const assistants = await alice.assistants.search();
    expect(assistants.map((a) => a.graph_id).sort()).toEqual(["chat", "support"]);
    const chat = await alice.assistants.get("chat");
    expect(await alice.assistants.get(chat.assistant_id)).toEqual(chat);
    const graph = await alice.assistants.getGraph("chat");
    expect(graph.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["__start__", "agent", "tools", "__end__"]));
    const schemas = await alice.assistants.getSchemas("chat");
    expect(Object.keys(schemas.input_schema!.properties as object)).toEqual(["messages"]);
    expect(Object.keys(schemas.state_schema!.properties as object)).toContain("messages");
    await expect(alice.assistants.get("nope")).rejects.toMatchObject({ status: 404 });
    // The support assistant is read-only, but drawn: its plan, gather, coverage loop and its state.
    const support = await alice.assistants.getGraph("support");
    expect(support.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["plan", "gather", "coverage"]));
    const supportSchemas = await alice.assistants.getSchemas("support");
    expect(Object.keys(supportSchemas.state_schema!.properties as object)).toContain("next_node");
  });

  it("creates, reads, patches, searches and deletes threads, each user seeing only their own", async () => {
    const t1 = await alice.threads.create({ metadata: { topic: "hiking" } });
    const t2 = await alice.threads.create({ metadata: { topic: "cooking" } });
    const theirs = await bob.threads.create({ metadata: { topic: "hiking" } });
    expect(await alice.threads.get(t1.thread_id)).toMatchObject({
      thread_id: t1.thread_id,
      metadata: { topic: "hiking" },
    });

    // if_exists: an existing id is 409 unless do_nothing, which returns it
    await expect(alice.threads.create({ threadId: t1.thread_id })).rejects.toMatchObject({ status: 409 });
    expect((await alice.threads.create({ threadId: t1.thread_id, ifExists: "do_nothing" })).thread_id).toBe(
      t1.thread_id,
    );

    const hiking = await alice.threads.search({ metadata: { topic: "hiking" } });
    expect(hiking.map((t) => t.thread_id)).toEqual([t1.thread_id]);
    const mine = await alice.threads.search({ sortBy: "created_at", sortOrder: "asc" });
    expect(mine.map((t) => t.thread_id)).toEqual([t1.thread_id, t2.thread_id]);
    expect((await alice.threads.search({ limit: 1, offset: 1, sortOrder: "asc" })).map((t) => t.thread_id)).toEqual([
      t2.thread_id,
    ]);

    const patched = await alice.threads.update(t2.thread_id, { metadata: { topic: "baking", pinned: true } });
    expect(patched.metadata).toMatchObject({ topic: "baking", pinned: true });

    await expect(bob.threads.get(t1.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(alice.threads.get(theirs.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.threads.delete(t1.thread_id)).rejects.toMatchObject({ status: 404 });

    await alice.threads.delete(t2.thread_id);
    await expect(alice.threads.get(t2.thread_id)).rejects.toMatchObject({ status: 404 });
    expect((await alice.threads.search()).map((t) => t.thread_id)).toEqual([t1.thread_id]);
  });

  it("streams a run in values and messages-tuple, then serves its state, history and transcript", async () => {
    const thread = await alice.threads.create();
    const events: Array<{ event: string; data: any }> = [];
    for await (const chunk of alice.runs.stream(thread.thread_id, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
      streamMode: ["values", "messages-tuple"],
    }))
      events.push(chunk);

    expect(events[0]!.event).toBe("metadata");
    const runId = events[0]!.data.run_id as string;
    const kinds = events.map((e) => e.event);
    expect(kinds).toContain("messages");
    expect(kinds.lastIndexOf("messages")).toBeLessThan(kinds.lastIndexOf("values"));
    expect(kinds).not.toContain("error");
    const chunk = events.find((e) => e.event === "messages")!.data;
    expect(chunk[0]).toMatchObject({ type: "AIMessageChunk" });

    const final = events.filter((e) => e.event === "values").at(-1)!.data.messages as Msg[];
    expect(final.map((m) => [m.type, m.content])).toEqual([
      ["human", "hi"],
      ["ai", "Hello! How can I help you today?"],
    ]);

    const state = await alice.threads.getState<{ messages: Msg[] }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).toBeTruthy();
    const at = await alice.threads.getState<{ messages: Msg[] }>(thread.thread_id, state.checkpoint.checkpoint_id!);
    expect(at.values.messages).toEqual(state.values.messages);

    const history = await alice.threads.getHistory<{ messages: Msg[] }>(thread.thread_id, { limit: 100 });
    expect(history.length).toBeGreaterThan(1);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);

    expect(await alice.runs.get(thread.thread_id, runId)).toMatchObject({ run_id: runId, status: "success" });
    await expect(bob.threads.getState(thread.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.runs.get(thread.thread_id, runId)).rejects.toMatchObject({ status: 404 });

    // The same conversation through the existing API.
    const res = await fetch(`${stack.url}/api/sessions/${thread.thread_id}/messages`, {
      headers: { "x-user-id": "alice" },
    });
    expect(((await res.json()) as Array<{ role: string; content: string }>).map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "Hello! How can I help you today?"],
    ]);
  });

  it("streams updates per node, and a stateless run's stream on a thread of its own", async () => {
    const events: Array<{ event: string; data: any }> = [];
    for await (const chunk of alice.runs.stream(null, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
      streamMode: "updates",
    }))
      events.push(chunk);
    expect(events.map((e) => e.event)).toEqual(["metadata", ...events.slice(1).map(() => "updates")]);
    const agent = events.find((e) => e.event === "updates" && e.data.agent)!.data.agent;
    expect(agent.messages.at(-1)).toMatchObject({ type: "ai", content: "Hello! How can I help you today?" });
  });

  it("waits for a run on a thread and a stateless one; only the new message enters the graph", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "chat", { input: { messages: [{ role: "user", content: "hi" }] } });
    const second = (await alice.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ type: "human", content: [{ type: "text", text: "I like hiking" }] }] },
    })) as { messages: Msg[] };
    expect(second.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
    expect(second.messages[2]!.content).toBe("I like hiking");

    const stateless = (await alice.runs.wait(null, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
    })) as {
      messages: Msg[];
    };
    expect(stateless.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect((await alice.threads.search()).map((t) => t.thread_id)).not.toContain(undefined);
  });

  it("refuses bad runs with precise 4xx", async () => {
    const thread = await alice.threads.create();
    const run = (input: unknown, assistant = "chat") =>
      alice.runs.wait(thread.thread_id, assistant, { input: input as Record<string, unknown> });
    await expect(run({ messages: [] })).rejects.toMatchObject({ status: 400 });
    await expect(run({ messages: [{ type: "ai", content: "x" }] })).rejects.toMatchObject({ status: 400 });
    await expect(run({ messages: [{ type: "human", content: "   " }] })).rejects.toMatchObject({ status: 400 });
    await expect(run({ messages: [{ type: "human", content: "hi" }] }, "support")).rejects.toMatchObject({
      status: 409,
    });
    await expect(run({ messages: [{ type: "human", content: "hi" }] }, "nope")).rejects.toMatchObject({ status: 404 });
    await expect(
      bob.runs.wait(thread.thread_id, "chat", { input: { messages: [{ type: "human", content: "hi" }] } }),
    ).rejects.toMatchObject({ status: 404 });
    const stream = bob.runs.stream(thread.thread_id, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    await expect(stream.next()).rejects.toMatchObject({ status: 404 });
  });

  it("maps the store onto the caller's memories: put, get, search by query, namespaces, delete", async () => {
    await alice.store.putItem(["memories", "alice"], "pet", { content: "My dog is called Rex", category: "personal" });
    await alice.store.putItem(["memories", "alice"], "city", { content: "I live in Lisbon" });
    await alice.store.putItem(["memories", "alice", "work"], "stack", { content: "We deploy with the AWS CDK" });

    expect(await alice.store.getItem(["memories", "alice"], "pet")).toMatchObject({
      key: "pet",
      namespace: ["memories", "alice"],
      value: { content: "My dog is called Rex", category: "personal" },
    });
    // A put with the same key replaces the item.
    await alice.store.putItem(["memories", "alice"], "pet", { content: "My dog is called Bolt", category: "personal" });
    expect((await alice.store.getItem(["memories", "alice"], "pet"))?.value).toMatchObject({
      content: "My dog is called Bolt",
    });

    const found = await alice.store.searchItems(["memories", "alice"], { query: "what is my dog called", limit: 1 });
    expect(found.items.map((i) => i.key)).toEqual(["pet"]);
    const filtered = await alice.store.searchItems(["memories"], { filter: { category: "personal" } });
    // (memory extraction may have added facts from the earlier runs' turns: only these are asserted)
    const personal = filtered.items.map((i) => i.value.content);
    expect(personal).toContain("My dog is called Bolt");
    expect(personal).not.toContain("My dog is called Rex");
    expect(personal).not.toContain("I live in Lisbon");
    const inProject = await alice.store.searchItems(["memories", "alice", "work"]);
    expect(inProject.items.map((i) => i.key)).toEqual(["stack"]);
    const namespaces = await alice.store.listNamespaces();
    expect(namespaces.namespaces.map((n) => n.join("/")).sort()).toEqual(["memories/alice", "memories/alice/work"]);

    // The agent knows it: the same rows /api/memories lists.
    const listed = await fetch(`${stack.url}/api/memories`, { headers: { "x-user-id": "alice" } });
    expect(JSON.stringify(await listed.json())).toContain("My dog is called Bolt");

    // Nobody else's namespaces: 404, as if they did not exist.
    await expect(bob.store.getItem(["memories", "alice"], "pet")).rejects.toMatchObject({ status: 404 });
    await expect(bob.store.putItem(["memories", "alice"], "x", { content: "hi" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(bob.store.searchItems(["memories", "alice"])).rejects.toMatchObject({ status: 404 });
    expect((await bob.store.searchItems(["memories"])).items).toEqual([]);
    expect((await bob.store.searchItems(["memories"], { query: "dog" })).items).toEqual([]);
    await expect(alice.store.putItem(["memories", "alice"], "bad", { text: "no content" })).rejects.toMatchObject({
      status: 400,
    });

    await alice.store.deleteItem(["memories", "alice"], "pet");
    // A key the store does not hold is null, as LangGraph's store answers it.
    expect(await alice.store.getItem(["memories", "alice"], "pet")).toBeNull();
    // A prefix reaches the namespaces under it.
    const left = (await alice.store.searchItems(["memories", "alice"], { limit: 100 })).items.map((i) => i.key);
    expect(left).toEqual(expect.arrayContaining(["city", "stack"]));
    expect(left).not.toContain("pet");
  });

  it("answers the CORS preflights of pages on this machine, marks its responses, streams and errors for them, and no other origin's", async () => {
    const origin = "http://localhost:5173";
    const preflight = await fetch(`${stack.url}/threads/search`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "x-api-key" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("x-api-key");
    const search = await fetch(`${stack.url}/threads/search`, {
      method: "POST",
      headers: { origin, "content-type": "application/json", "x-user-id": "alice" },
      body: "{}",
    });
    expect(search.headers.get("access-control-allow-origin")).toBe(origin);
    const missing = await fetch(`${stack.url}/threads/${crypto.randomUUID()}`, { headers: { origin } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(origin);
    const refused = await fetch(`${stack.url}/runs/stream`, { method: "POST", headers: { origin }, body: "{}" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("access-control-allow-origin")).toBe(origin);
    // By default the local stack answers pages from this machine only (shared/cors.ts, LOOPBACK):
    // a web page from elsewhere reads nothing, and its preflight for a DELETE is refused.
    const foreign = "https://evil.example.org";
    const read = await fetch(`${stack.url}/api/me/export`, { headers: { origin: foreign, "x-user-id": "alice" } });
    await read.body?.cancel();
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
    const erase = await fetch(`${stack.url}/api/me`, {
      method: "OPTIONS",
      headers: {
        origin: foreign,
        "access-control-request-method": "DELETE",
        "access-control-request-headers": "x-user-id",
      },
    });
    await erase.body?.cancel();
    expect(erase.headers.get("access-control-allow-origin")).toBeNull();
    // Nor a page under a name an attacker resolves to 127.0.0.1 (DNS rebinding), which CORS never sees.
    const byHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const { port } = new URL(stack.url);
        request({ host: "127.0.0.1", port, path: "/api/memories", headers: { host, "x-user-id": "alice" } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
          .on("error", reject)
          .end();
      });
    expect(await byHost(`rebind.attacker.example:${new URL(stack.url).port}`)).toBe(421);
    expect(await byHost(`localhost:${new URL(stack.url).port}`)).toBe(200);
  });
});
