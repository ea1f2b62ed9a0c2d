import { randomUUID } from "node:crypto";
import { QueryCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { freshUser, localStackDynamo, sharedLocalStack } from "../support/local-stack";
import { recordingServer } from "../support/recording-server";
import { gather, human, type Part, rememberFact, sdkClient, texts, type Values } from "../support/sdk";

// Background runs (issue 29) through the real SDK Client against the local stack: runs.create
// answers at once and the run worker (its queue, the production handler) runs it; join, joinStream,
// list, get, delete and cancel as LangGraph's server answers them.

const local = sharedLocalStack();

const clientFor = (user = freshUser("background")) => sdkClient(local.stack, user);
// About 3 s of streaming: only a cancel ends it early.
const VERY_LONG = rememberFact(20);
const LONG = rememberFact(6);

describe("background runs", () => {
  it("create answers at once with a pending run; join answers with the thread's values once the worker ran it", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: human("hi"),
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id, status: "pending", multitask_strategy: "reject" });
    const values = await client.runs.join(thread.thread_id, run.run_id);
    expect(texts(values)).toEqual(["human: hi", "ai: Hello! How can I help you today?"]);
    expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "success" });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("joinStream follows a background run from its first event to its end, numbered, ending in the final state", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: human(LONG),
      streamMode: ["values", "messages-tuple"],
    });
    const parts = await gather(client.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>);
    expect(parts[0]).toMatchObject({ id: "0", event: "metadata", data: { run_id: run.run_id } });
    expect(parts.map((p) => p.id)).toEqual(parts.map((_, i) => String(i)));
    expect(parts.some((p) => p.event === "messages")).toBe(true);
    const last = parts.filter((p) => p.event === "values").at(-1)!.data;
    expect(last).toEqual((await client.threads.getState(thread.thread_id)).values);
  });

  it("runs two enqueued background runs in the order they were made, and never runs one cancelled while it waited", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "chat", { input: human(LONG) });
    const second = await client.runs.create(thread.thread_id, "chat", {
      input: human("How much does the Pro plan cost?"),
      multitaskStrategy: "enqueue",
    });
    const third = await client.runs.create(thread.thread_id, "chat", {
      input: human("What is the refund policy?"),
      multitaskStrategy: "enqueue",
    });
    // A default (reject) run while others wait: refused, and nothing recorded.
    await expect(client.runs.create(thread.thread_id, "chat", { input: human("hi") })).rejects.toMatchObject({
      status: 422,
    });
    await client.runs.cancel(thread.thread_id, third.run_id);
    const values = await client.runs.join(thread.thread_id, second.run_id);
    // The first run's turn, then the second's; the cancelled third never ran.
    const messages = (values as Values).messages;
    expect(messages.filter((m) => m.type === "human").map((m) => String(m.content).slice(0, 20))).toEqual([
      "Remember that the qu",
      "How much does the Pr",
    ]);
    expect(messages.at(-1)!.type).toBe("ai");
    const runs = await client.runs.list(thread.thread_id);
    // Newest first, each as it ended.
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([
      [third.run_id, "interrupted"],
      [second.run_id, "success"],
      [first.run_id, "success"],
    ]);
    expect(await client.runs.list(thread.thread_id, { status: "interrupted" })).toHaveLength(1);
    expect(await client.runs.list(thread.thread_id, { limit: 1, offset: 1 })).toMatchObject([
      { run_id: second.run_id },
    ]);

    const log = (runId: string) => {
      const { client: dynamo, table } = localStackDynamo(local.stack);
      return dynamo.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": { S: `runlog#${runId}` } },
          ConsistentRead: true,
        }),
      );
    };
    expect((await log(first.run_id)).Count).toBeGreaterThan(0);
    await client.runs.delete(thread.thread_id, first.run_id);
    // Its event log (its messages) went with it.
    expect((await log(first.run_id)).Count).toBe(0);
    await expect(client.runs.get(thread.thread_id, first.run_id)).rejects.toMatchObject({ status: 404 });
    await expect(client.runs.delete(thread.thread_id, first.run_id)).rejects.toMatchObject({ status: 404 });
    expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
  });

  it("keeps a run made with after_seconds pending until its time, and a cancel then makes it interrupted, never run", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("foo") });
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("bar"), afterSeconds: 10 });
    expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 500));
    expect(await client.runs.list(thread.thread_id, { status: "pending" })).toMatchObject([{ run_id: waiting.run_id }]);
    await client.runs.cancel(thread.thread_id, waiting.run_id);
    expect(await client.runs.list(thread.thread_id, { status: "interrupted" })).toMatchObject([
      { run_id: waiting.run_id },
    ]);
    expect(((await client.threads.getState(thread.thread_id)).values as Values).messages).toHaveLength(2);
  });

  it("shows its thread busy from the moment it is made until no run waits on it, as LangGraph's server does", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const status = async () => (await client.threads.get(thread.thread_id)).status;
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("foo"), afterSeconds: 10 });
    // Busy before any worker took it: a client waiting for the thread to be done waits for the run.
    expect(await status()).toBe("busy");
    expect((await client.threads.search({ status: "busy" })).map((t) => t.thread_id)).toContain(thread.thread_id);
    // A run that goes ahead of it and ends leaves the thread busy: one still waits.
    await client.runs.wait(thread.thread_id, "chat", { input: human("bar"), multitaskStrategy: "enqueue" });
    expect(await status()).toBe("busy");
    // Its cancel leaves nothing waiting: the thread is as its state says again.
    await client.runs.cancel(thread.thread_id, waiting.run_id);
    expect(await status()).toBe("idle");
    const deleted = await client.runs.create(thread.thread_id, "chat", { input: human("baz"), afterSeconds: 10 });
    expect(await status()).toBe("busy");
    await client.runs.cancel(thread.thread_id, deleted.run_id, false, "rollback");
    expect(await status()).toBe("idle");
    const removed = await client.runs.create(thread.thread_id, "chat", { input: human("qux"), afterSeconds: 10 });
    expect(await status()).toBe("busy");
    await client.runs.delete(thread.thread_id, removed.run_id);
    expect(await status()).toBe("idle");
  });

  it("shows a thread left busy with nothing running or waiting (a crash between two writes) as its state says", async () => {
    const user = freshUser("background");
    const client = clientFor(user);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi") });
    const { client: dynamo, table } = localStackDynamo(local.stack);
    await dynamo.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: `threads#${user}` }, sk: { S: thread.thread_id } },
        UpdateExpression: "SET #s = :busy, updated_at = :then",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: {
          ":busy": { S: "busy" },
          ":then": { S: new Date(Date.now() - 5 * 60_000).toISOString() },
        },
      }),
    );
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    expect((await client.threads.search({ status: "busy" })).map((t) => t.thread_id)).not.toContain(thread.thread_id);
    // A fresh mark is a run's own, about to hold the thread: left as it is.
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("later"), afterSeconds: 10 });
    expect((await client.threads.get(thread.thread_id)).status).toBe("busy");
    await client.runs.cancel(thread.thread_id, waiting.run_id);
  });

  it("takes no state write while a run waits its turn (409), and one once it was cancelled", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("foo"), afterSeconds: 10 });
    const write = () =>
      client.threads.updateState(thread.thread_id, {
        values: { messages: [{ type: "ai", content: "One must imagine Sisyphus happy." }] },
        asNode: "agent",
      });
    await expect(write()).rejects.toMatchObject({ status: 409 });
    expect(JSON.stringify((await client.threads.getState(thread.thread_id)).values)).not.toContain("Sisyphus");
    await client.runs.cancel(thread.thread_id, waiting.run_id);
    await write();
    expect(JSON.stringify((await client.threads.getState(thread.thread_id)).values)).toContain("Sisyphus");
  });

  it("refuses a foreground run under reject while a background run waits its turn (422), as LangGraph's server does", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("foo"), afterSeconds: 10 });
    await expect(client.runs.wait(thread.thread_id, "chat", { input: human("bar") })).rejects.toMatchObject({
      status: 422,
    });
    await client.runs.cancel(thread.thread_id, waiting.run_id);
    expect(texts(await client.runs.wait(thread.thread_id, "chat", { input: human("bar") }))[0]).toBe("human: bar");
  });

  it.each([
    ["interrupt", "interrupted, never run"],
    ["rollback", "deleted, never run"],
  ] as const)("%s stops a run still waiting its turn too: it is %s", async (strategy, _outcome) => {
    const client = clientFor();
    const thread = await client.threads.create();
    const waiting = await client.runs.create(thread.thread_id, "chat", { input: human("foo"), afterSeconds: 3 });
    const values = await client.runs.wait(thread.thread_id, "chat", {
      input: human("bar"),
      multitaskStrategy: strategy,
    });
    expect(texts(values)).toEqual(["human: bar", expect.stringMatching(/^ai: /)]);
    if (strategy === "interrupt")
      expect(await client.runs.get(thread.thread_id, waiting.run_id)).toMatchObject({ status: "interrupted" });
    else await expect(client.runs.get(thread.thread_id, waiting.run_id)).rejects.toMatchObject({ status: 404 });
    // Past its time, it still never ran.
    await new Promise((r) => setTimeout(r, 3500));
    const messages = ((await client.threads.getState(thread.thread_id)).values as Values).messages;
    expect(messages.map((m) => m.content)).not.toContain("foo");
  });

  it("an interrupting background run stops what was live when it was made, and nothing made after it", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "chat", {
      input: human(VERY_LONG),
      streamMode: ["messages-tuple"],
    });
    await expect
      .poll(async () => (await client.runs.get(thread.thread_id, first.run_id)).status, { interval: 50 })
      .toBe("running");
    const second = await client.runs.create(thread.thread_id, "chat", {
      input: human("How much does the Pro plan cost?"),
      multitaskStrategy: "interrupt",
    });
    const third = await client.runs.create(thread.thread_id, "chat", {
      input: human("What is the refund policy?"),
      multitaskStrategy: "enqueue",
    });
    await client.runs.join(thread.thread_id, third.run_id);
    const status = async (run: { run_id: string }) => (await client.runs.get(thread.thread_id, run.run_id)).status;
    expect([await status(first), await status(second), await status(third)]).toEqual([
      "interrupted",
      "success",
      "success",
    ]);
  });

  it("creates, joins, lists and deletes nothing of anyone else's thread, and refuses bad requests before recording a run", async () => {
    const ownerId = freshUser("background-owner");
    const owner = clientFor(ownerId);
    const thread = await owner.threads.create();
    const run = await owner.runs.create(thread.thread_id, "chat", { input: human("hi") });
    await owner.runs.join(thread.thread_id, run.run_id);
    const other = clientFor();
    for (const attempt of [
      () => other.runs.create(thread.thread_id, "chat", { input: human("hi") }),
      () => other.runs.join(thread.thread_id, run.run_id),
      () => other.runs.list(thread.thread_id),
      () => other.runs.delete(thread.thread_id, run.run_id),
      () => other.runs.cancel(thread.thread_id, run.run_id),
    ])
      await expect(attempt()).rejects.toMatchObject({ status: 404 });
    await expect(owner.runs.join(thread.thread_id, randomUUID())).rejects.toMatchObject({ status: 404 });
    await expect(
      owner.runs.create(thread.thread_id, "no-such-assistant", { input: human("hi") }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const raw = (body: string) =>
      fetch(`${local.stack.url}/threads/${thread.thread_id}/runs`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-user-id": ownerId,
        },
        body,
      });
    for (const body of [
      "{",
      "[]",
      '{"assistant_id": 7}',
      '{"assistant_id":"chat","input":{"messages":[{"type":"ai","content":"x"}]}}',
      '{"assistant_id":"chat","input":{"messages":[{"type":"human","content":"a\\u0000b"}]}}',
    ])
      expect((await raw(body)).status, body).toBeGreaterThanOrEqual(400);
    expect(await owner.runs.list(thread.thread_id)).toHaveLength(1);
  });
});

describe("cancel within a second, with the default settings", () => {
  it("stops a streamed (foreground) run within 1 s of runs.cancel", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    let runId: string | undefined;
    let cancelledAt = 0;
    let tokens = 0;
    for await (const part of client.runs.stream(thread.thread_id, "chat", {
      input: human(VERY_LONG),
      streamMode: ["messages-tuple"],
    }) as AsyncIterable<Part>) {
      if (part.event === "metadata") runId = (part.data as { run_id: string }).run_id;
      if (part.event === "messages" && ++tokens === 5) {
        cancelledAt = performance.now();
        await client.runs.cancel(thread.thread_id, runId!);
      }
    }
    const ended = performance.now() - cancelledAt;
    expect(cancelledAt).toBeGreaterThan(0);
    expect(ended).toBeLessThan(1000);
    const run = await client.runs.get(thread.thread_id, runId!);
    expect(run.status).toBe("interrupted");
  });

  it("stops a background run within 1 s of runs.cancel", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: human(VERY_LONG),
      streamMode: ["messages-tuple"],
    });
    let tokens = 0;
    let cancelledAt = 0;
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id) as AsyncIterable<Part>) {
      if (part.event === "messages" && ++tokens === 5 && !cancelledAt) {
        cancelledAt = performance.now();
        await client.runs.cancel(thread.thread_id, run.run_id);
        break;
      }
    }
    expect(cancelledAt).toBeGreaterThan(0);
    for (;;) {
      const { status } = await client.runs.get(thread.thread_id, run.run_id);
      if (status !== "running") {
        expect(status).toBe("interrupted");
        break;
      }
      expect(performance.now() - cancelledAt).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(performance.now() - cancelledAt).toBeLessThan(1000);
  });
});

describe("reject", () => {
  it("lets exactly one of a background and a streamed run racing onto an idle thread in, never neither", async () => {
    const user = freshUser("reject-race");
    const client = clientFor(user);
    const post = (path: string, body: unknown) =>
      fetch(`${local.stack.url}${path}`, {
        method: "POST",
        headers: { "x-user-id": user, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, text: await res.text() }));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const input = {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "the quick brown fox jumps. ".repeat(3) }] },
      stream_mode: ["values"],
    };
    const admitted: number[] = [];
    const made: [string, string][] = [];
    // Before, a background run's admission that found the streamed run's lease took its record back
    // after the streamed run had seen it and refused itself: both 422 (6 in 40).
    for (let k = 0; k < 40; k++) {
      const thread = await client.threads.create();
      const off = k % 20;
      const [bg, fg] = await Promise.all([
        sleep(off < 10 ? 0 : off - 10).then(() => post(`/threads/${thread.thread_id}/runs`, input)),
        sleep(off < 10 ? off : 0).then(() => post(`/threads/${thread.thread_id}/runs/stream`, input)),
      ]);
      for (const r of [bg, fg]) expect([200, 422]).toContain(r.status);
      admitted.push([bg, fg].filter((r) => r.status === 200).length);
      if (bg.status === 200) made.push([thread.thread_id, (JSON.parse(bg.text) as { run_id: string }).run_id]);
    }
    // The background runs let in, finished before the next test (all at once, not one per try).
    await Promise.all(made.map(([threadId, runId]) => client.runs.join(threadId, runId)));
    expect(admitted.filter((n) => n !== 1)).toEqual([]);
  }, 60_000);
});

const logPages = async (runId: string) => {
  const { client: dynamo, table } = localStackDynamo(local.stack);
  const out = await dynamo.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": { S: `runlog#${runId}` } },
      ConsistentRead: true,
    }),
  );
  return out.Count ?? 0;
};

describe("a thread deleted as a background run is made on it", () => {
  it("leaves no event log of the run (it was refused when its turn came: no thread)", async () => {
    const client = clientFor();
    const made: string[] = [];
    for (let k = 0; k < 8; k++) {
      const thread = await client.threads.create();
      const [run, deleted] = await Promise.allSettled([
        client.runs.create(thread.thread_id, "chat", { input: human("hi"), multitaskStrategy: "enqueue" }),
        new Promise((r) => setTimeout(r, k % 4)).then(() => client.threads.delete(thread.thread_id)),
      ]);
      if (run.status === "fulfilled" && deleted.status === "fulfilled") made.push(run.value.run_id);
    }
    expect(made.length).toBeGreaterThan(0);
    // The worker takes each (it finds no thread); once it has, nothing of the run is left.
    await new Promise((r) => setTimeout(r, 2000));
    for (const runId of made) expect(await logPages(runId)).toBe(0);
  }, 30_000);
});

describe("stateless runs", () => {
  it("leave no event log once their thread is deleted (on_completion delete), streamed resumable", async () => {
    const client = clientFor();
    let streamed: string | undefined;
    for await (const part of client.runs.stream(null, "chat", {
      input: human("a secret for one run"),
      streamResumable: true,
    }) as AsyncIterable<Part>)
      if (part.event === "metadata") streamed = (part.data as { run_id: string }).run_id;
    expect(await client.threads.search({ limit: 100 })).toEqual([]);
    expect(await logPages(streamed!)).toBe(0);
  });
});

/** A webhook receiver that answers 200, and a new thread with one turn in it; the receiver is closed after. */
async function withReceiver(
  test: (
    hook: Awaited<ReturnType<typeof recordingServer>>,
    client: ReturnType<typeof clientFor>,
    thread: { thread_id: string },
  ) => Promise<void>,
) {
  const hook = await recordingServer(() => ({ status: 200, body: { ok: true } }));
  try {
    const client = clientFor();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", { input: human("hi") });
    await test(hook, client, thread);
  } finally {
    await hook.close();
  }
}

describe("completion webhooks", () => {
  it("post the finished run to the run's webhook, background and streamed alike, and again later after a failure", async () => {
    let failuresLeft = 1;
    const hook = await recordingServer((req) => {
      if (req.path === "/flaky" && failuresLeft-- > 0) return { status: 500, body: { error: "try later" } };
      return { status: 200, body: { ok: true } };
    });
    try {
      const client = clientFor();
      const thread = await client.threads.create();
      const background = await client.runs.create(thread.thread_id, "chat", {
        input: human("hi"),
        webhook: `${hook.url}/done`,
        metadata: { origin: "test" },
      });
      await client.runs.join(thread.thread_id, background.run_id);
      await expect.poll(() => hook.requests.filter((r) => r.path === "/done").length, { timeout: 10_000 }).toBe(1);
      const posted = hook.requests.find((r) => r.path === "/done")!;
      expect(posted.method).toBe("POST");
      expect(posted.body).toMatchObject({
        run_id: background.run_id,
        thread_id: thread.thread_id,
        status: "success",
        metadata: { origin: "test" },
        values: {
          messages: [
            { type: "human", content: "hi" },
            { type: "ai", content: "Hello! How can I help you today?" },
          ],
        },
      });
      const sent = posted.body as { run_started_at: string; run_ended_at: string; webhook_sent_at: string };
      expect(Date.parse(sent.run_ended_at)).toBeGreaterThanOrEqual(Date.parse(sent.run_started_at));
      expect(Date.parse(sent.webhook_sent_at)).toBeGreaterThanOrEqual(Date.parse(sent.run_ended_at));

      // A streamed run's webhook; its receiver fails once, and is sent it again about 5 s later.
      const started = Date.now();
      await gather(
        client.runs.stream(thread.thread_id, "chat", {
          input: human("thanks"),
          webhook: `${hook.url}/flaky`,
        }) as AsyncIterable<Part>,
      );
      await expect.poll(() => hook.requests.filter((r) => r.path === "/flaky").length, { timeout: 15_000 }).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
      const [first, second] = hook.requests.filter((r) => r.path === "/flaky");
      expect((second!.body as { run_id: string }).run_id).toBe((first!.body as { run_id: string }).run_id);
    } finally {
      await hook.close();
    }
  }, 30_000);

  it("post runs that end without running too: refused when their turn came (error), or withdrawn while they waited (interrupted)", async () => {
    await withReceiver(async (hook, client, thread) => {
      // Refused once the worker took it: its checkpoint is not one of the thread's.
      const refused = await client.runs.create(thread.thread_id, "chat", {
        checkpoint: { checkpoint_id: "1f000000-0000-6000-8000-000000000000", checkpoint_ns: "" },
        webhook: `${hook.url}/refused`,
      } as never);
      await client.runs.join(thread.thread_id, refused.run_id);
      await expect.poll(() => hook.requests.filter((r) => r.path === "/refused").length, { timeout: 10_000 }).toBe(1);
      expect(hook.requests.find((r) => r.path === "/refused")!.body).toMatchObject({
        run_id: refused.run_id,
        status: "error",
        error: expect.stringContaining("checkpoint"),
      });
      // Waiting behind a long run: one cancelled, one withdrawn by a later run's interrupt.
      const long = await client.runs.create(thread.thread_id, "chat", { input: human(LONG) });
      const cancelled = await client.runs.create(thread.thread_id, "chat", {
        input: human("one"),
        multitaskStrategy: "enqueue",
        webhook: `${hook.url}/cancelled`,
      });
      await client.runs.cancel(thread.thread_id, cancelled.run_id);
      const withdrawn = await client.runs.create(thread.thread_id, "chat", {
        input: human("two"),
        multitaskStrategy: "enqueue",
        webhook: `${hook.url}/withdrawn`,
      });
      const last = await client.runs.create(thread.thread_id, "chat", {
        input: human("three"),
        multitaskStrategy: "interrupt",
      });
      await client.runs.join(thread.thread_id, last.run_id);
      await expect.poll(() => hook.requests.filter((r) => r.path !== "/refused").length, { timeout: 10_000 }).toBe(2);
      for (const [path, run] of [
        ["/cancelled", cancelled],
        ["/withdrawn", withdrawn],
      ] as const)
        expect(hook.requests.find((r) => r.path === path)?.body).toMatchObject({
          run_id: run.run_id,
          status: "interrupted",
        });
      expect(hook.requests.filter((r) => r.body && (r.body as { run_id?: string }).run_id === long.run_id)).toEqual([]);
    });
  }, 30_000);

  it("posts a run cancelled while it waited once, as interrupted, though its start would have been refused", async () => {
    await withReceiver(async (hook, client, thread) => {
      // A streamed run holds the thread meanwhile.
      const streamed = gather(
        client.runs.stream(thread.thread_id, "chat", {
          input: human(VERY_LONG),
          streamMode: ["messages-tuple"],
        }) as AsyncIterable<Part>,
      );
      await expect.poll(async () => (await client.threads.get(thread.thread_id)).status, { interval: 50 }).toBe("busy");
      // Its checkpoint is not the thread's: refused once the thread is its.
      const waiting = await client.runs.create(thread.thread_id, "chat", {
        checkpoint: { checkpoint_id: "1f000000-0000-6000-8000-000000000000", checkpoint_ns: "" },
        multitaskStrategy: "enqueue",
        webhook: `${hook.url}/waiting`,
      } as never);
      // Taken by a worker, waiting for the thread's lease.
      await expect
        .poll(async () => (await client.runs.get(thread.thread_id, waiting.run_id)).status, { interval: 50 })
        .toBe("running");
      await client.runs.cancel(thread.thread_id, waiting.run_id);
      await streamed;
      await new Promise((r) => setTimeout(r, 1500));
      expect(hook.requests.map((r) => (r.body as { status: string }).status)).toEqual(["interrupted"]);
      expect((await client.runs.get(thread.thread_id, waiting.run_id)).status).toBe("interrupted");
    });
  }, 30_000);

  it("refuses a webhook to a host the deployment does not allow, before recording or running anything", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    for (const webhook of [
      "https://evil.example.net/x",
      "http://169.254.169.254/latest",
      "file:///etc/passwd",
      "not a url",
    ]) {
      await expect(client.runs.create(thread.thread_id, "chat", { input: human("hi"), webhook })).rejects.toMatchObject(
        {
          status: 400,
        },
      );
      await expect(client.runs.wait(thread.thread_id, "chat", { input: human("hi"), webhook })).rejects.toMatchObject({
        status: 400,
      });
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({});
  });
});
