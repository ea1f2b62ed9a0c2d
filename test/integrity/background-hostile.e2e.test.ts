import { randomUUID } from "node:crypto";
import { freshUser, sharedLocalStack } from "../support/local-stack";
import { requestAs } from "../support/raw-request";
import { human, rememberFact, sdkClient } from "../support/sdk";

// Background runs and crons (issue 29) against hostile requests, on the local stack: a config too
// big or unstorable for the run's record, a race of creates under `reject`, a thread asked to be
// made by a request that is then refused, the read-only assistant, crons named by their graph, a
// cron's metadata patched, ids that are not ids. Each is a precise 4xx, and nothing of it is kept.

const local = sharedLocalStack();

const clientFor = (user: string) => sdkClient(local.stack, user);
const LONG = rememberFact(6);

const send = (user: string, method: string, path: string, body?: string) =>
  requestAs(local.stack.url, user, method, path, body);
const code = (text: string) => (JSON.parse(text) as { error?: { code?: string } }).error?.code;

describe("background runs and crons, against hostile requests", () => {
  it.each([
    ["an oversized configurable", `{"x":"${"a".repeat(500_000)}"}`, /too_large/],
    ["a NUL in a configurable key", `{"a\\u0000b":1}`, /invalid/],
    ["a lone surrogate in a configurable value", `{"a":"x\\ud800"}`, /invalid/],
    ["a NUL in a nested configurable value", `{"a":{"b":["\\u0000"]}}`, /invalid/],
  ])("refuses %s on a background run and a cron, keeping nothing", async (_name, configurable, expected) => {
    const user = freshUser("hostile-config");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const run = `{"assistant_id":"chat","input":{"messages":[{"type":"human","content":"hi"}]},"config":{"configurable":${configurable}}}`;
    const created = await send(user, "POST", `/threads/${thread.thread_id}/runs`, run);
    expect(created.status, created.text).toBe(400);
    expect(code(created.text)).toMatch(expected);
    const cron = await send(
      user,
      "POST",
      `/threads/${thread.thread_id}/runs/crons`,
      `${run.slice(0, -1)},"schedule":"0 9 * * *"}`,
    );
    expect(cron.status, cron.text).toBe(400);
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([]);
  });

  it("refuses a NUL in config.tags", async () => {
    const user = freshUser("hostile-tags");
    const thread = await clientFor(user).threads.create();
    const reply = await send(
      user,
      "POST",
      `/threads/${thread.thread_id}/runs`,
      `{"assistant_id":"chat","input":null,"config":{"tags":["a\\u0000"]}}`,
    );
    expect(reply.status, reply.text).toBe(400);
  });

  it("admits one of many background runs created at once under reject; the rest are refused and not kept", async () => {
    const user = freshUser("hostile-race");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const body = JSON.stringify({ assistant_id: "chat", input: human(LONG), multitask_strategy: "reject" });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => send(user, "POST", `/threads/${thread.thread_id}/runs`, body)),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 422)).toBe(true);
    const admitted = JSON.parse(replies.find((r) => r.status === 200)!.text) as { run_id: string };
    await client.runs.join(thread.thread_id, admitted.run_id);
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([admitted.run_id]);
    const humans = (
      (await client.threads.getState(thread.thread_id)).values as { messages: { type: string }[] }
    ).messages.filter((m) => m.type === "human");
    expect(humans).toHaveLength(1);
  });

  it.each([
    ["/runs", "an AI message as input", { assistant_id: "chat", input: { messages: [{ type: "ai", content: "hi" }] } }],
    [
      "/runs",
      "a webhook not allowed",
      { assistant_id: "chat", input: human("hi"), webhook: "https://elsewhere.example.com/hook" },
    ],
    ["/runs", "the read-only assistant", { assistant_id: "support", input: human("hi") }],
    ["/runs", "an unknown assistant", { assistant_id: "nobody", input: human("hi") }],
    ["/runs", "an unknown strategy", { assistant_id: "chat", input: human("hi"), multitask_strategy: "sideways" }],
    [
      "/runs/wait",
      "an AI message as input",
      { assistant_id: "chat", input: { messages: [{ type: "ai", content: "hi" }] } },
    ],
    ["/runs/wait", "the read-only assistant", { assistant_id: "support", input: human("hi") }],
    [
      "/runs/stream",
      "a webhook not allowed",
      { assistant_id: "chat", input: human("hi"), webhook: "https://elsewhere.example.com/hook" },
    ],
    ["/runs/stream", "a 2 MB body", { assistant_id: "chat", input: human("x".repeat(2_000_000)) }],
  ])("makes no thread for if_not_exists create when the run on %s is refused (%s)", async (route, _why, run) => {
    const user = freshUser("hostile-create");
    const threadId = randomUUID();
    const reply = await send(
      user,
      "POST",
      `/threads/${threadId}${route}`,
      JSON.stringify({ ...run, if_not_exists: "create" }),
    );
    expect(reply.status, reply.text).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    expect((await send(user, "GET", `/threads/${threadId}`)).status).toBe(404);
    expect(await clientFor(user).threads.search()).toEqual([]);
  });

  it("makes the thread in the run's project when if_not_exists create names one, and runs it there", async () => {
    const user = freshUser("hostile-create-project");
    const threadId = randomUUID();
    const run = (project: string) =>
      send(
        user,
        "POST",
        `/threads/${threadId}/runs/wait`,
        JSON.stringify({
          assistant_id: "chat",
          input: human("hi"),
          if_not_exists: "create",
          config: { configurable: { project_id: project } },
        }),
      );
    const first = await run("alpha");
    expect(first.status, first.text).toBe(200);
    expect((await run("alpha")).status).toBe(200);
    // The thread is alpha's: a run naming another project is refused, as a session's is.
    expect((await run("beta")).status).toBe(409);
  });

  it("refuses the read-only support assistant on a background run and a cron", async () => {
    const user = freshUser("hostile-support");
    const client = clientFor(user);
    const thread = await client.threads.create();
    await expect(client.runs.create(thread.thread_id, "support", { input: human("hi") })).rejects.toMatchObject({
      status: 409,
    });
    await expect(
      client.crons.createForThread(thread.thread_id, "support", { schedule: "0 9 * * *", input: human("hi") }),
    ).rejects.toMatchObject({ status: 409 });
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([]);
  });

  it("refuses a cron whose metadata leaves no room for the cron_id its firings add, at create and at PATCH", async () => {
    const client = clientFor(freshUser("hostile-cron-metadata"));
    const thread = await client.threads.create();
    // 65,516 bytes of JSON: within the 64 KB of metadata, but not with `"cron_id":"<uuid>"` beside it.
    const full = { pad: "x".repeat(65_506) };
    await expect(
      client.crons.createForThread(thread.thread_id, "chat", {
        schedule: "0 9 * * *",
        input: human("hi"),
        metadata: full,
      }),
    ).rejects.toMatchObject({ status: 400 });
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "0 9 * * *",
      input: human("hi"),
    });
    await expect(client.crons.update(cron.cron_id, { metadata: full } as never)).rejects.toMatchObject({
      status: 400,
    });
    expect(await client.crons.search({ threadId: thread.thread_id })).toMatchObject([{ metadata: {} }]);
  });

  it("refuses after_seconds on a cron (its runs start at their firing), and shows no next run past its end_time", async () => {
    const user = freshUser("hostile-cron-time");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const delayed = await send(
      user,
      "POST",
      `/threads/${thread.thread_id}/runs/crons`,
      JSON.stringify({ assistant_id: "chat", schedule: "0 9 * * *", input: human("hi"), after_seconds: 60 }),
    );
    expect(delayed.status, delayed.text).toBe(400);
    const ended = await send(
      user,
      "POST",
      `/threads/${thread.thread_id}/runs/crons`,
      JSON.stringify({
        assistant_id: "chat",
        schedule: "0 9 * * *",
        input: human("hi"),
        end_time: "2026-01-01T00:00:00Z",
      }),
    );
    expect(ended.status, ended.text).toBe(200);
    expect(JSON.parse(ended.text)).toMatchObject({ end_time: "2026-01-01T00:00:00.000Z", next_run_date: null });
  });

  it("finds crons by their graph's name as well as their assistant's id", async () => {
    const client = clientFor(freshUser("hostile-cron-search"));
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "0 9 * * *",
      input: human("hi"),
    });
    expect((await client.crons.search({ assistantId: "chat" })).map((c) => c.cron_id)).toEqual([cron.cron_id]);
    expect((await client.crons.search({ assistantId: cron.assistant_id })).map((c) => c.cron_id)).toEqual([
      cron.cron_id,
    ]);
    expect(await client.crons.count({ assistantId: "chat" })).toBe(1);
    expect(await client.crons.search({ assistantId: "nobody" })).toEqual([]);
    expect(await client.crons.count({ assistantId: randomUUID() })).toBe(0);
  });

  it("gives a cron's firings the metadata it was patched to", async () => {
    const client = clientFor(freshUser("hostile-cron-patch"));
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "*/5 * * * *",
      input: human("hi"),
      metadata: { purpose: "old" },
    });
    const patched = await client.crons.update(cron.cron_id, { metadata: { purpose: "new" } } as never);
    expect(patched).toMatchObject({ metadata: { purpose: "new" }, payload: { metadata: { purpose: "new" } } });
    expect(await local.stack.crons.fireDue(new Date(patched.next_run_date!))).toContain(cron.cron_id);
    await expect.poll(async () => (await client.runs.list(thread.thread_id)).length, { timeout: 15_000 }).toBe(1);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run!.metadata).toMatchObject({ purpose: "new", cron_id: cron.cron_id });
    await client.runs.join(thread.thread_id, run!.run_id);
    await client.crons.delete(cron.cron_id);
  });

  it.each(["join", "stream", "", "cancel"])("answers a run id that is not a UUID on /%s with 400", async (tail) => {
    const user = freshUser("hostile-run-id");
    const thread = await clientFor(user).threads.create();
    const method = tail === "cancel" ? "POST" : "GET";
    const reply = await send(user, method, `/threads/${thread.thread_id}/runs/not-a-run${tail ? `/${tail}` : ""}`);
    expect(reply.status, reply.text).toBe(400);
    expect(code(reply.text)).toBe("invalid_run_id");
  });
});
