import type { Client } from "@langchain/langgraph-sdk";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import { freshUser, localStackDynamo, localStackForTests } from "../support/local-stack";
import { RunEventLog } from "../../shared/stores/run-events";
import { recordingServer } from "../support/recording-server";
import { human, type Part, rememberFact, sdkClient, texts, type Values } from "../support/sdk";

// A background run a worker has taken (claimed, `running`) that waits for its thread's lease
// while another run holds it (issue 29): its own cancel, or another run's interrupt, must stop
// it, and not the run that holds the thread. A stack of its own: the local run worker takes one
// message at a time, and another file's run must not keep it from taking this one.

const local = localStackForTests("waiting-runs");

const clientFor = (user = freshUser("waiting")) => sdkClient(local.stack, user);
const VERY_LONG = rememberFact(20);

describe("a run a worker took that waits for its thread", () => {
  /** A streamed run holding the thread for about 3 s, and an enqueued background run a worker took, waiting for it. */
  async function busyThread(client: Client) {
    const thread = await client.threads.create();
    const parts = client.runs.stream(thread.thread_id, "chat", {
      input: human(VERY_LONG),
      streamMode: ["messages-tuple"],
    }) as AsyncIterable<Part>;
    const iterator = parts[Symbol.asyncIterator]();
    const first = { run_id: ((await iterator.next()).value as Part & { data: { run_id: string } }).data.run_id };
    const streamed = (async () => {
      while (!(await iterator.next()).done);
    })();
    const status = async (run: { run_id: string }) => (await client.runs.get(thread.thread_id, run.run_id)).status;
    const second = await client.runs.create(thread.thread_id, "chat", {
      input: human("How much does the Pro plan cost?"),
      multitaskStrategy: "enqueue",
    });
    await expect.poll(() => status(second), { interval: 50, timeout: 2000 }).toBe("running");
    return { thread, first, second, status, streamed };
  }

  it("is cancelled itself by its cancel, and never runs; the run that holds the thread goes on", async () => {
    const client = clientFor();
    const { thread, first, second, status, streamed } = await busyThread(client);
    await client.runs.cancel(thread.thread_id, second.run_id);
    expect([await status(first), await status(second)]).toEqual(["running", "interrupted"]);
    // The streamed run was not the one stopped: it goes on until it is cancelled itself.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await status(first)).toBe("running");
    await client.runs.cancel(thread.thread_id, first.run_id);
    await streamed;
    const humans = ((await client.threads.getState(thread.thread_id)).values as Values).messages.filter(
      (m) => m.type === "human",
    );
    expect(humans).toHaveLength(1);
    expect(await status(second)).toBe("interrupted");
  });

  it("stops only the run it names when cancelled twice at once, or cancelled and deleted at once", async () => {
    const client = clientFor();
    const { thread, first, second, status, streamed } = await busyThread(client);
    await Promise.all([
      client.runs.cancel(thread.thread_id, second.run_id),
      client.runs.cancel(thread.thread_id, second.run_id, false, "rollback"),
      client.runs.delete(thread.thread_id, second.run_id).catch(() => undefined),
    ]);
    // The streamed run holding the thread was named by none of them: it goes on.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await status(first)).toBe("running");
    await client.runs.cancel(thread.thread_id, first.run_id);
    await streamed;
  });

  it("answers a cancel with wait only once the run it names stopped", async () => {
    const client = clientFor();
    const { thread, first, status, streamed } = await busyThread(client);
    await client.runs.cancel(thread.thread_id, first.run_id, true);
    expect(await status(first)).toBe("interrupted");
    await client.runs.delete(thread.thread_id, first.run_id);
    await streamed;
  });

  it("is stopped by an interrupting run, with the one holding the thread, and never runs", async () => {
    const client = clientFor();
    const { thread, first, second, status, streamed } = await busyThread(client);
    const values = await client.runs.wait(thread.thread_id, "chat", {
      input: human("What is the refund policy?"),
      multitaskStrategy: "interrupt",
    });
    expect(texts(values).filter((t) => t.startsWith("human"))).toEqual([
      expect.stringMatching(/^human: Remember that/),
      "human: What is the refund policy?",
    ]);
    await streamed;
    expect([await status(first), await status(second)]).toEqual(["interrupted", "interrupted"]);
  });
});

describe("reject across the ways a thread is held", () => {
  it("refuses a background run under reject while an /api/chat turn holds the thread, keeping nothing", async () => {
    const user = freshUser("reject-chat");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const turn = fetch(`${local.stack.url}/api/chat/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user-id": user },
      body: JSON.stringify({ message: VERY_LONG, session_id: thread.thread_id }),
    });
    const reader = (await turn).body!.getReader();
    await reader.read(); // the turn began: it holds the thread's lease
    await expect(client.runs.create(thread.thread_id, "chat", { input: human("hi") })).rejects.toMatchObject({
      status: 422,
    });
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    while (!(await reader.read()).done);
  });

  it("lets at most one of foreground and background runs made at once under reject onto an idle thread", async () => {
    const user = freshUser("reject-race");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const body = JSON.stringify({ assistant_id: "chat", input: human("hi") });
    const send = (path: string) =>
      fetch(`${local.stack.url}/threads/${thread.thread_id}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user-id": user },
        body,
      });
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => send(i % 2 ? "/runs" : "/runs/wait")));
    const admitted = replies.filter((r) => r.status === 200);
    expect(replies.filter((r) => r.status !== 200).every((r) => r.status === 422)).toBe(true);
    expect(admitted.length).toBeLessThanOrEqual(1);
    await expect
      .poll(async () => (await client.runs.list(thread.thread_id)).filter((r) => r.status === "success").length, {
        timeout: 10_000,
      })
      .toBe(admitted.length);
    const humans = ((await client.threads.getState(thread.thread_id)).values as Values | null)?.messages?.filter(
      (m) => m.type === "human",
    );
    expect(humans?.length ?? 0).toBe(admitted.length);
  });
});

describe("a run left running by a crash", () => {
  /** A run record as a crashed function leaves it: running, begun (or not), nobody holding the thread. */
  async function crashedRun(
    threadId: string,
    { begun, minutesAgo = 0, webhook }: { begun: boolean; minutesAgo?: number; webhook?: string },
  ) {
    const { client, table } = localStackDynamo(local.stack);
    const runId = randomUUID();
    const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: threadId },
          sk: { S: `run#${runId}` },
          run_id: { S: runId },
          assistant_id: { S: "chat" },
          status: { S: "running" },
          multitask_strategy: { S: "reject" },
          metadata: { M: {} },
          created_at: { S: at },
          updated_at: { S: at },
          ...(begun ? { started_at: { S: at } } : {}),
          ...(webhook ? { kwargs: { S: JSON.stringify({ assistant_id: "chat", webhook }) } } : {}),
        },
      }),
    );
    return { run_id: runId };
  }

  it("is shown lost once nobody holds its thread: its join ends, it can be deleted, and the thread takes runs", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const lost = await crashedRun(thread.thread_id, { begun: true });
    expect(await client.runs.get(thread.thread_id, lost.run_id)).toMatchObject({
      status: "error",
      error: { code: "worker_lost" },
    });
    const other = await crashedRun(thread.thread_id, { begun: true });
    expect(await client.runs.join(thread.thread_id, other.run_id)).toMatchObject({
      __error__: { code: "worker_lost" },
    });
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");
    await client.runs.delete(thread.thread_id, lost.run_id);
    await crashedRun(thread.thread_id, { begun: true });
    expect(texts(await client.runs.wait(thread.thread_id, "chat", { input: human("hi") }))[0]).toBe("human: hi");
  });

  // A probe's finding: a lost run found by the next run on its thread (rather than by a read of it)
  // was marked worker_lost without its completion webhook, and no later reader could post it.
  it("posts its webhook once when the next run on its thread is what finds it lost", async () => {
    const hooks = await recordingServer(() => ({ status: 200, body: {} }));
    try {
      const client = clientFor();
      const thread = await client.threads.create();
      const lost = await crashedRun(thread.thread_id, { begun: true, webhook: `${hooks.url}/done` });
      await client.runs.wait(thread.thread_id, "chat", { input: human("hi") });
      await local.stack.queues.webhooks.drained();
      expect(await client.runs.get(thread.thread_id, lost.run_id)).toMatchObject({ status: "error" });
      await local.stack.queues.webhooks.drained();
      const posted = hooks.requests.filter((r) => (r.body as { run_id?: string })?.run_id === lost.run_id);
      expect(posted).toHaveLength(1);
      expect(posted[0]!.body).toMatchObject({ status: "error" });
    } finally {
      await hooks.close();
    }
  });

  // A probe's finding: rejoining the stream of a run that lost its worker replayed its events and
  // ended cleanly, so a joinStream client saw a failed run end as a finished one.
  it("ends a rejoined stream with an error event saying the run lost its worker", async () => {
    const user = freshUser("rejoiner");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const lost = await crashedRun(thread.thread_id, { begun: true });
    const { client: dynamo, table } = localStackDynamo(local.stack);
    const log = new RunEventLog(dynamo, table).writer(lost.run_id);
    log.push("metadata", { run_id: lost.run_id, attempt: 1 });
    await log.close();
    const res = await fetch(`${local.stack.url}/threads/${thread.thread_id}/runs/${lost.run_id}/stream`, {
      headers: { "x-user-id": user },
    });
    const text = await res.text();
    expect(text).toContain("event: metadata");
    expect(text).toMatch(/event: error\ndata: \{[^\n]*"worker_lost"/);
  });

  // A probe's finding: the thread of a lost run was set to `error` though another run still waited
  // its turn on it (the thread refused runs as busy while saying error).
  it("leaves its thread busy, not in error, while another run waits its turn on it", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const lost = await crashedRun(thread.thread_id, { begun: true });
    await client.runs.create(thread.thread_id, "chat", {
      input: human("later"),
      multitaskStrategy: "enqueue",
      afterSeconds: 600,
    });
    expect(await client.runs.get(thread.thread_id, lost.run_id)).toMatchObject({ status: "error" });
    expect((await client.threads.get(thread.thread_id)).status).toBe("busy");
  });

  it("holds its thread no longer than a worker may wait, when it was taken and never began", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await crashedRun(thread.thread_id, { begun: false, minutesAgo: 1 });
    await expect(client.runs.wait(thread.thread_id, "chat", { input: human("hi") })).rejects.toMatchObject({
      status: 422,
    });
    const stale = await client.threads.create();
    await crashedRun(stale.thread_id, { begun: false, minutesAgo: 16 });
    expect(texts(await client.runs.wait(stale.thread_id, "chat", { input: human("hi") }))[0]).toBe("human: hi");
    const run = await client.runs.create(stale.thread_id, "chat", { input: human("and again") });
    expect(run.status).toBe("pending");
  });
});
