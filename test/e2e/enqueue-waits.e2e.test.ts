import type { Client } from "@langchain/langgraph-sdk";
import { freshUser, localStackForTests } from "../support/local-stack";
import { human, type Part, rememberFact, sdkClient } from "../support/sdk";

// A probe's finding: an enqueued background run (and so a cron's firing) behind a long run waited
// at most SESSION_QUEUE_WAIT_MS for its thread, then ended `error session_busy` and never ran,
// though its worker had 15 minutes; a foreground enqueue run that ran out of its wait was told to
// "choose a different multitask strategy". A stack of its own with a short request wait, so a
// streamed run of about 3 s outlasts it.
const local = localStackForTests("enqueue-waits", { SESSION_QUEUE_WAIT_MS: "300" });

/** A streamed run holding a new thread for about a second, and a way to wait for its end. */
async function busyThread(client: Client) {
  const thread = await client.threads.create();
  const parts = client.runs.stream(thread.thread_id, "chat", {
    input: human(rememberFact(6)),
    streamMode: ["messages-tuple"],
  }) as AsyncIterable<Part>;
  const iterator = parts[Symbol.asyncIterator]();
  await iterator.next();
  const streamed = (async () => {
    while (!(await iterator.next()).done);
  })();
  return { thread, streamed };
}

describe("a run that waits its turn", () => {
  it("in the background waits past the request's wait for the run ahead, then runs", async () => {
    const client = sdkClient(local.stack, freshUser("enqueuer"));
    const { thread, streamed } = await busyThread(client);
    const queued = await client.runs.create(thread.thread_id, "chat", {
      input: human("How much does the Pro plan cost?"),
      multitaskStrategy: "enqueue",
    });
    await streamed;
    await expect
      .poll(async () => (await client.runs.get(thread.thread_id, queued.run_id)).status, {
        interval: 100,
        timeout: 15_000,
      })
      .toBe("success");
  });

  it("in the foreground is told the thread was still busy when its wait ran out, not to pick another strategy", async () => {
    const user = freshUser("waiter");
    const { thread, streamed } = await busyThread(sdkClient(local.stack, user));
    const res = await fetch(`${local.stack.url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-user-id": user },
      body: JSON.stringify({ assistant_id: "chat", input: human("hello"), multitask_strategy: "enqueue" }),
    });
    const body = (await res.json()) as { detail: string; error: { code: string } };
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("thread_busy");
    expect(body.detail).toMatch(/still running after the wait this request allows/);
    expect(body.detail).not.toMatch(/different multitask strategy/);
    await streamed;
  });
});
