import { randomUUID } from "node:crypto";
import { freshUser, sharedLocalStack } from "../support/local-stack";
import { human, sdkClient } from "../support/sdk";

// Crons (issue 29) through the real SDK Client against the local stack: made on a thread, each
// firing (the local scheduler, EventBridge Scheduler's stand-in, into the run worker's queue) a
// background run on that thread, as its creator.

const local = sharedLocalStack();

const clientFor = (user = freshUser("crons")) => sdkClient(local.stack, user);

describe("crons", () => {
  it("fire a background run on their thread at their time; search, count, update and delete them", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "*/5 * * * *",
      input: human("hi"),
      metadata: { purpose: "check-in" },
    });
    expect(cron).toMatchObject({
      thread_id: thread.thread_id,
      schedule: "*/5 * * * *",
      metadata: { purpose: "check-in" },
    });
    const next = new Date(cron.next_run_date);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getUTCMinutes() % 5).toBe(0);

    // Nothing before its time; at its time, one firing, one run, as its creator, on its thread.
    expect(await local.stack.crons.fireDue(new Date(next.getTime() - 1000))).not.toContain(cron.cron_id);
    expect(await local.stack.crons.fireDue(next)).toContain(cron.cron_id);
    await expect.poll(async () => (await client.runs.list(thread.thread_id)).length, { timeout: 15_000 }).toBe(1);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run!.metadata).toMatchObject({ cron_id: cron.cron_id, purpose: "check-in" });
    const values = (await client.runs.join(thread.thread_id, run!.run_id)) as { messages: { content: string }[] };
    expect(values.messages.map((m) => m.content)).toEqual(["hi", "Hello! How can I help you today?"]);

    expect(await client.crons.search({ threadId: thread.thread_id })).toMatchObject([{ cron_id: cron.cron_id }]);
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(1);
    const updated = await client.crons.update(cron.cron_id, { schedule: "0 9 * * 1-5" });
    expect(updated.schedule).toBe("0 9 * * 1-5");
    await client.crons.delete(cron.cron_id);
    expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([]);
    // A deleted cron fires nothing: its schedule went with it.
    expect(await local.stack.crons.fireDue(new Date(Date.now() + 7 * 86_400_000))).not.toContain(cron.cron_id);
  });

  it("make one run of a firing that reaches the queue twice, as two messages (a scheduler's retried send)", async () => {
    const user = freshUser("crons");
    const client = clientFor(user);
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "chat", {
      schedule: "0 9 * * *",
      input: human("hi"),
    });
    const firing = { cron_id: cron.cron_id, user_id: user, scheduled_time: cron.next_run_date };
    await local.stack.queues.runs.publish(firing);
    await local.stack.queues.runs.publish(firing);
    await local.stack.queues.runs.drained();
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
    // The next firing is a run of its own.
    await local.stack.queues.runs.publish({
      ...firing,
      scheduled_time: new Date(Date.parse(cron.next_run_date) + 86_400_000).toISOString(),
    });
    await local.stack.queues.runs.drained();
    expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
    await client.crons.delete(cron.cron_id);
  });

  it("refuses bad schedules, anyone else's thread or cron, and bad runs, before scheduling anything", async () => {
    const owner = clientFor();
    const thread = await owner.threads.create();
    const other = clientFor();
    for (const schedule of ["every minute", "* * * *", "0 0 1 * 1", "61 * * * *", "* * * * * *"])
      await expect(
        owner.crons.createForThread(thread.thread_id, "chat", { schedule, input: human("hi") }),
      ).rejects.toMatchObject({ status: 400 });
    await expect(
      other.crons.createForThread(thread.thread_id, "chat", { schedule: "0 9 * * *", input: human("hi") }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      owner.crons.createForThread(thread.thread_id, "no-such-assistant", { schedule: "0 9 * * *", input: human("hi") }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      owner.crons.createForThread(thread.thread_id, "chat", {
        schedule: "0 9 * * *",
        input: human("hi"),
        webhook: "https://evil.example.net/x",
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(await owner.crons.count({})).toBe(0);

    const cron = await owner.crons.createForThread(thread.thread_id, "chat", {
      schedule: "0 9 * * *",
      input: human("hi"),
    });
    await expect(other.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
    await expect(other.crons.update(cron.cron_id, { schedule: "* * * * *" })).rejects.toMatchObject({ status: 404 });
    expect(await other.crons.search({})).toEqual([]);
    await expect(owner.crons.delete(randomUUID())).rejects.toMatchObject({ status: 404 });
    await expect(owner.crons.create("chat", { schedule: "0 9 * * *", input: human("hi") })).rejects.toMatchObject({
      status: 422,
    });
    // A thread deleted under its cron: the next firing removes the cron, and runs nothing.
    await owner.threads.delete(thread.thread_id);
    const at = new Date(cron.next_run_date);
    expect(await local.stack.crons.fireDue(at)).toContain(cron.cron_id);
    await expect.poll(() => owner.crons.count({}), { timeout: 10_000 }).toBe(0);
  });

  it("a cron deleted while a patch of it is under way stays deleted: not listed, and its schedule gone", async () => {
    const client = clientFor();
    const thread = await client.threads.create();
    const deleted: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // The patch read the cron, then wrote it: a delete between the two once made it again (11 in 64).
    for (let i = 0; i < 48; i++) {
      const cron = await client.crons.createForThread(thread.thread_id, "chat", {
        schedule: "0 9 * * *",
        input: human("hi"),
      });
      await Promise.all([
        sleep((i >> 3) % 6).then(() =>
          client.crons.update(cron.cron_id, { metadata: { i } }).catch((e: { status?: number }) => {
            expect(e.status).toBe(404);
          }),
        ),
        sleep(i % 8).then(() => client.crons.delete(cron.cron_id)),
      ]);
      deleted.push(cron.cron_id);
    }
    expect(await client.crons.search({ threadId: thread.thread_id, limit: 100 })).toEqual([]);
    const fired = await local.stack.crons.fireDue(new Date(Date.now() + 2 * 86_400_000));
    expect(fired.filter((id) => deleted.includes(id))).toEqual([]);
  });
});
