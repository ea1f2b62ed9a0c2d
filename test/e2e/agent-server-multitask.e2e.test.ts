import { Client } from "@langchain/langgraph-sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";

// multitask_strategy with two overlapping runs on one thread. The offline stand-in streams a word
// every 500 ms, so the first run is still answering when the second arrives (sent on its first
// token); a 3 s lease makes the heartbeat, which reads the cancel flag, beat every second.
const dataDir = mkdtempSync(join(tmpdir(), "agent-server-multitask-"));
let stack: LocalStack;
let client: Client;

beforeAll(async () => {
  stack = await startLocalStack({
    DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "SILENT",
    OFFLINE_STREAM_DELAY_MS: "500",
    SESSION_LEASE_MS: "3000",
  });
  client = new Client({
    apiUrl: stack.url,
    defaultHeaders: { "x-user-id": "carol" },
    callerOptions: { maxRetries: 0 },
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type Msg = { type: string; content: string };

/** Starts run A: `started` resolves with its run id once its first token arrived; `done` with all its events. */
function firstRun(threadId: string) {
  let runId = "";
  let answering!: (id: string) => void;
  const started = new Promise<string>((r) => (answering = r));
  const done = (async () => {
    const events: Array<{ event: string; data: any }> = [];
    for await (const e of client.runs.stream(threadId, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
      streamMode: ["messages-tuple", "values"],
    })) {
      events.push(e);
      if (e.event === "metadata") runId = e.data.run_id;
      if (e.event === "messages") answering(runId);
    }
    answering(runId);
    return events;
  })();
  return { started, done };
}

const second = (threadId: string, multitaskStrategy: "reject" | "enqueue" | "interrupt" | "rollback") =>
  client.runs.wait(threadId, "chat", {
    input: { messages: [{ type: "human", content: "I like hiking" }] },
    multitaskStrategy,
  }) as Promise<{ messages: Msg[] }>;

const messagesOf = async (threadId: string) =>
  (await client.threads.getState<{ messages: Msg[] }>(threadId)).values.messages.map((m) => [m.type, m.content]);

describe("multitask_strategy with overlapping runs", () => {
  it("reject: the second run gets 409 and the first finishes", async () => {
    const thread = await client.threads.create();
    const a = firstRun(thread.thread_id);
    await a.started;
    await expect(second(thread.thread_id, "reject")).rejects.toMatchObject({ status: 409 });
    const events = await a.done;
    expect(events.map((e) => e.event)).not.toContain("error");
    expect(await messagesOf(thread.thread_id)).toEqual([
      ["human", "hi"],
      ["ai", "Hello! How can I help you today?"],
    ]);
  });

  it("enqueue: the second run waits for the first, then answers after it", async () => {
    const thread = await client.threads.create();
    const a = firstRun(thread.thread_id);
    await a.started;
    const b = await second(thread.thread_id, "enqueue");
    expect((await a.done).map((e) => e.event)).not.toContain("error");
    expect(b.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
    expect(b.messages[0]!.content).toBe("hi");
    expect(b.messages[2]!.content).toBe("I like hiking");
  });

  it("interrupt: the first run stops, keeping its message; the second answers", async () => {
    const thread = await client.threads.create();
    const a = firstRun(thread.thread_id);
    await a.started;
    const b = await second(thread.thread_id, "interrupt");
    const events = await a.done;
    expect(events.at(-1)).toMatchObject({ event: "error", data: { error: "run_cancelled" } });
    const runA = await client.runs.get(thread.thread_id, events[0]!.data.run_id);
    expect(runA.status).toBe("interrupted");
    const messages = b.messages.map((m) => [m.type, m.content]);
    expect(messages[0]).toEqual(["human", "hi"]);
    expect(messages.slice(-2).map(([type]) => type)).toEqual(["human", "ai"]);
    expect(messages.filter(([type]) => type === "ai")).toHaveLength(1);
    expect(await messagesOf(thread.thread_id)).toEqual(messages);
  });

  it("rollback: the first run stops and its message is taken back out; the second answers", async () => {
    const thread = await client.threads.create();
    const a = firstRun(thread.thread_id);
    await a.started;
    const b = await second(thread.thread_id, "rollback");
    const events = await a.done;
    expect(events.at(-1)).toMatchObject({ event: "error", data: { error: "run_cancelled" } });
    expect(b.messages.map((m) => [m.type, m.content.length > 0])).toEqual([
      ["human", true],
      ["ai", true],
    ]);
    expect(b.messages[0]!.content).toBe("I like hiking");
    expect((await messagesOf(thread.thread_id)).map(([type]) => type)).toEqual(["human", "ai"]);
    // Its checkpoints are gone, not only its message: no state in the history ever held it.
    const history = await client.threads.getHistory<{ messages?: { content: unknown }[] }>(thread.thread_id, {
      limit: 100,
    });
    expect(history.length).toBeGreaterThan(0);
    expect(history.some((s) => (s.values.messages ?? []).some((m) => m.content === "hi"))).toBe(false);
  });

  it("cancel: POST .../cancel stops a running run", async () => {
    const thread = await client.threads.create();
    const a = firstRun(thread.thread_id);
    const runId = await a.started;
    await client.runs.cancel(thread.thread_id, runId, false, "interrupt");
    const events = await a.done;
    expect(events.at(-1)).toMatchObject({ event: "error", data: { error: "run_cancelled" } });
    expect((await client.runs.get(thread.thread_id, runId)).status).toBe("interrupted");
    expect((await messagesOf(thread.thread_id)).map(([type]) => type)).toEqual(["human"]);
  });
});
