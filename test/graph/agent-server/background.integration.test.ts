import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import {
  type BackgroundDeps,
  createBackgroundRun,
  runAsItStands,
  RunStillWaiting,
  runQueued,
} from "../../../graph/agent-server/background";
import type { RunCreateBody } from "../../../graph/agent-server/requests";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { admissionKey, AgentRuns, type RunRecord } from "../../../shared/stores/agent-runs";
import { RunEventLog } from "../../../shared/stores/run-events";
import { LEASE_SORT_KEY } from "../../../shared/stores/session-lease";

// The run worker's choice of what to run (graph/agent-server/background.ts), on real run records
// in dynalite: whichever message arrives, a thread's pending runs start oldest first; a run is
// claimed once however often its message comes; a run found running on a redelivery lost its worker.

let dynamo: LocalDynamo;
let runs: AgentRuns;
const table = `background-${randomUUID()}`;
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await createCheckpointTable(dynamo.client, table);
  runs = new AgentRuns(dynamo.client, table);
});
afterAll(() => dynamo.close());

/**
 * The run store, a thread service that records which threads it was asked to settle (and says
 * whether a thread's lease is held), and a webhooks queue that records what it was sent.
 */
const deps = (
  settled: unknown[] = [],
  { leaseHolder = undefined as string | undefined, posted = [] as unknown[] } = {},
) =>
  ({
    runs,
    threads: {
      settleWaiting: async (...args: unknown[]) => void settled.push(args),
      records: { update: async () => {} },
      // As SessionOwners.leaseHeld: held at all, or (naming a run) by that run.
      owners: {
        leaseHeld: async (_thread: string, runId?: string) =>
          leaseHolder !== undefined && (runId === undefined || runId === leaseHolder),
      },
    },
    runDeps: { webhooks: { publish: async (message: unknown) => void posted.push(message) } },
  }) as unknown as BackgroundDeps;

async function pending(threadId: string, n: number): Promise<RunRecord[]> {
  const made: RunRecord[] = [];
  for (let i = 0; i < n; i++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    const run: RunRecord = {
      runId: randomUUID(),
      threadId,
      assistantId: "chat",
      status: "pending",
      multitaskStrategy: "enqueue",
      metadata: {},
      createdAt: at,
      updatedAt: at,
      kwargs: { assistant_id: "chat" },
      userId: "u",
    };
    await runs.put(run);
    made.push(run);
  }
  return made;
}

/** Runs nothing: records what was started, and finishes it as a worker would. */
function recorder() {
  const started: string[] = [];
  const run = async (_deps: BackgroundDeps, claimed: RunRecord) => {
    started.push(claimed.runId);
    await runs.finish(claimed.threadId, claimed.runId, "success");
  };
  return { started, run };
}

/** A run a worker took `minutesAgo` and has or has not begun, as its record then reads. */
const taken = (run: RunRecord, { minutesAgo = 0, begun = false } = {}) => {
  const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
  return runs.put({ ...run, status: "running", updatedAt: at, ...(begun ? { startedAt: at } : {}) });
};

describe("the run worker's order", () => {
  it("starts a thread's pending runs oldest first, whichever run's message came first", async () => {
    const thread = randomUUID();
    const [first, second, third] = await pending(thread, 3);
    const { started, run } = recorder();
    await runQueued(deps(), { thread_id: thread, run_id: second!.runId }, { redelivered: false }, run);
    expect(started).toEqual([first!.runId, second!.runId]);
    // The later messages: the first's finds it done, the third's runs it.
    await runQueued(deps(), { thread_id: thread, run_id: first!.runId }, { redelivered: false }, run);
    await runQueued(deps(), { thread_id: thread, run_id: third!.runId }, { redelivered: false }, run);
    expect(started).toEqual([first!.runId, second!.runId, third!.runId]);
  });

  it("runs a run once when its message comes twice at once", async () => {
    const thread = randomUUID();
    const [only] = await pending(thread, 1);
    const { started, run } = recorder();
    const message = { thread_id: thread, run_id: only!.runId };
    await Promise.all([
      runQueued(deps(), message, { redelivered: false }, run),
      runQueued(deps(), message, { redelivered: true }, run),
    ]);
    expect(started).toEqual([only!.runId]);
  });

  it("marks a run it finds running on a redelivery as lost, and runs neither it nor a deleted or cancelled one", async () => {
    const thread = randomUUID();
    const [lost, cancelled, deleted] = await pending(thread, 3);
    // Taken 16 minutes ago and never begun: longer than any worker waits for its thread.
    await taken(lost!, { minutesAgo: 16 });
    await runs.transition(thread, cancelled!.runId, "pending", "interrupted");
    await runs.remove(thread, deleted!.runId);
    const { started, run } = recorder();
    const settled: unknown[] = [];
    await runQueued(deps(settled), { thread_id: thread, run_id: lost!.runId }, { redelivered: true }, run);
    // The thread it held busy is settled: nothing else would.
    expect(settled).toEqual([[lost!.userId, thread]]);
    await runQueued(deps(), { thread_id: thread, run_id: cancelled!.runId }, { redelivered: false }, run);
    await runQueued(deps(), { thread_id: thread, run_id: deleted!.runId }, { redelivered: false }, run);
    expect(started).toEqual([]);
    expect(await runs.get(thread, lost!.runId)).toMatchObject({ status: "error", error: { code: "worker_lost" } });
    expect((await runs.get(thread, cancelled!.runId))!.status).toBe("interrupted");
  });

  it("leaves a run taken but not begun while its worker may still wait for the thread, and ends it once it waited too long", async () => {
    const thread = randomUUID();
    const [waiting] = await pending(thread, 1);
    await taken(waiting!, { minutesAgo: 1 });
    const { run } = recorder();
    const message = { thread_id: thread, run_id: waiting!.runId };
    // Another run holds the thread: this one's worker may be waiting behind it. The message fails, to
    // be judged again on its next delivery; a reader leaves it as it is.
    await expect(
      runQueued(deps([], { leaseHolder: randomUUID() }), message, { redelivered: true }, run),
    ).rejects.toBeInstanceOf(RunStillWaiting);
    expect((await runAsItStands(deps(), (await runs.get(thread, waiting!.runId))!)).status).toBe("running");
    // Past the wait: lost, by a reader as by a redelivery.
    await taken(waiting!, { minutesAgo: 16 });
    expect(await runAsItStands(deps(), (await runs.get(thread, waiting!.runId))!)).toMatchObject({
      status: "error",
      error: { code: "worker_lost" },
    });
  });

  it("posts a lost run's webhook, once however many redeliveries find it, and leaves a run whose worker holds the lease", async () => {
    const thread = randomUUID();
    const [lost] = await pending(thread, 1);
    await taken({ ...lost!, kwargs: { assistant_id: "chat", webhook: "https://hooks.example/done" } }, { begun: true });
    const { started, run } = recorder();
    const message = { thread_id: thread, run_id: lost!.runId };
    // A copy delivered while its first worker still holds the thread: the run goes on.
    const posted: unknown[] = [];
    await runQueued(deps([], { leaseHolder: lost!.runId, posted }), message, { redelivered: true }, run);
    expect((await runs.get(thread, lost!.runId))!.status).toBe("running");
    expect(posted).toEqual([]);
    // Its worker gone, while another run holds the thread: lost all the same.
    await runQueued(deps([], { leaseHolder: randomUUID(), posted }), message, { redelivered: true }, run);
    expect((await runs.get(thread, lost!.runId))!.status).toBe("error");
    // Two more redeliveries at once: it was ended once, and its webhook posted once.
    await Promise.all([
      runQueued(deps([], { posted }), message, { redelivered: true }, run),
      runQueued(deps([], { posted }), message, { redelivered: true }, run),
    ]);
    expect(await runs.get(thread, lost!.runId)).toMatchObject({ status: "error", error: { code: "worker_lost" } });
    expect(posted).toEqual([
      expect.objectContaining({
        url: "https://hooks.example/done",
        payload: expect.objectContaining({ run_id: lost!.runId, status: "error", error: expect.any(String) }),
      }),
    ]);
    expect(started).toEqual([]);
  });

  it("lets one delete a run unless a worker runs it", async () => {
    const thread = randomUUID();
    const [running, waiting] = await pending(thread, 2);
    await runs.transition(thread, running!.runId, "pending", "running");
    expect(await runs.remove(thread, running!.runId)).toBe(false);
    expect(await runs.remove(thread, waiting!.runId)).toBe(true);
    expect((await runs.list(thread)).map((r) => r.runId)).toEqual([running!.runId]);
  });
});

describe("a run made to wait (after_seconds)", () => {
  it("is not started ahead of its time by an earlier message of its thread", async () => {
    const thread = randomUUID();
    const [later, now] = await pending(thread, 2);
    // The older run waits an hour: a message for the newer one runs only the newer one.
    await runs.put({
      ...later!,
      kwargs: { assistant_id: "chat", after_seconds: 900 },
      createdAt: new Date().toISOString(),
    });
    await runs.put({ ...now!, createdAt: new Date(Date.now() + 1).toISOString() });
    const { started, run } = recorder();
    await runQueued(deps(), { thread_id: thread, run_id: now!.runId }, { redelivered: false }, run);
    expect(started).toEqual([now!.runId]);
    expect((await runs.get(thread, later!.runId))!.status).toBe("pending");
  });
});

describe("admission under reject (AgentRuns.admit)", () => {
  const fresh = (threadId: string): RunRecord => {
    const at = new Date().toISOString();
    return {
      runId: randomUUID(),
      threadId,
      assistantId: "chat",
      status: "pending",
      multitaskStrategy: "reject",
      metadata: {},
      createdAt: at,
      updatedAt: at,
      userId: "u",
    };
  };

  it("lets exactly one of many runs admitted at once onto an idle thread, and keeps no other", async () => {
    const thread = randomUUID();
    const racers = Array.from({ length: 8 }, () => fresh(thread));
    const outcomes = await Promise.all(racers.map((r) => runs.admit(r)));
    expect(outcomes.filter((o) => o === "admitted")).toHaveLength(1);
    expect(outcomes.filter((o) => o !== "admitted").every((o) => o === "busy")).toBe(true);
    const admitted = racers[outcomes.indexOf("admitted")]!;
    expect((await runs.list(thread)).map((r) => r.runId)).toEqual([admitted.runId]);
  });

  it("is busy while a run is live, admits once it ended, and never admits the same run twice", async () => {
    const thread = randomUUID();
    const [live] = await pending(thread, 1);
    expect(await runs.admit(fresh(thread))).toBe("busy");
    await runs.finish(thread, live!.runId, "success");
    const next = fresh(thread);
    expect(await runs.admit(next)).toBe("admitted");
    expect(await runs.admit(next)).toBe("exists");
  });

  it("takes over an admission a crash left behind once it expired, never before", async () => {
    const thread = randomUUID();
    const doc = DynamoDBDocumentClient.from(dynamo.client);
    const crashed = (until: number) =>
      doc.send(
        new PutCommand({
          TableName: table,
          Item: { pk: admissionKey(thread), sk: LEASE_SORT_KEY, token: "crashed", lease_until: until },
        }),
      );
    await crashed(Date.now() + 60_000);
    expect(await runs.admit(fresh(thread))).toBe("busy");
    await crashed(Date.now() - 1);
    expect(await runs.admit(fresh(thread))).toBe("admitted");
  });
});

describe("a claimed run that cannot start", () => {
  it("ends in error, never stuck running, when its kept request no longer parses (a cron's metadata grown past its bound)", async () => {
    const thread = randomUUID();
    const [run] = await pending(thread, 1);
    await runs.put({ ...run!, kwargs: { assistant_id: "chat", metadata: { big: "x".repeat(70 * 1024) } } });
    const errors: unknown[] = [];
    const settled: unknown[] = [];
    const background = {
      runs,
      events: new RunEventLog(dynamo.client, table),
      runDeps: { onServerError: (e: unknown) => errors.push(e) },
      threads: { settleWaiting: async (...args: unknown[]) => void settled.push(args) },
    } as unknown as BackgroundDeps;
    await runQueued(background, { thread_id: thread, run_id: run!.runId }, { redelivered: false });
    expect(await runs.get(thread, run!.runId)).toMatchObject({ status: "error", error: { code: "internal_error" } });
    expect(errors).toHaveLength(1);
    // Its thread, busy since the run was made, is settled (in error, unless another run waits on it).
    expect(settled).toEqual([[run!.userId, thread, { whenDone: "error" }]]);
  });
});

describe("a background run its queue does not take", () => {
  it("is taken back, and its thread settled, rather than left pending and the thread busy for good", async () => {
    const thread = randomUUID();
    const settled: unknown[] = [];
    const background = {
      runs,
      events: new RunEventLog(dynamo.client, table),
      runDeps: {
        assistant: async () => ({ assistant_id: "chat", graph_id: "chat", configurable: {} }),
        maxMessageBytes: 10_000,
        webhookHosts: [],
        threads: { busy: async () => true },
      },
      threads: {
        owners: { leaseHeld: async () => false },
        settleWaiting: async (...args: unknown[]) => void settled.push(args),
      },
      runsQueue: {
        publish: async () => {
          throw new Error("SQS is unavailable");
        },
      },
    } as unknown as BackgroundDeps;
    await expect(
      createBackgroundRun(background, "ann", thread, {
        assistant_id: "chat",
        input: { messages: [{ role: "user", content: "hi" }] },
      } as RunCreateBody),
    ).rejects.toThrow("SQS is unavailable");
    expect(await runs.list(thread)).toEqual([]);
    expect(settled).toEqual([["ann", thread]]);
  });
});

describe("a background run made under a chosen id (a cron's firing)", () => {
  it.each(["interrupt", "rollback"] as const)(
    "is made once, and a second copy of its firing under %s stops nothing, not even its own run",
    async (strategy) => {
      const thread = randomUUID();
      const runId = randomUUID();
      const runDeps = {
        runs,
        assistant: async () => ({ assistant_id: "chat", graph_id: "chat", configurable: {} }),
        maxMessageBytes: 10_000,
        webhookHosts: [],
        threads: { busy: async () => true },
        requestCancel: async () => false,
      };
      const background = {
        runs,
        events: new RunEventLog(dynamo.client, table),
        runDeps,
        threads: { owners: { leaseHeld: async () => false }, settleWaiting: async () => {} },
      } as unknown as BackgroundDeps;
      const body = {
        assistant_id: "chat",
        input: { messages: [{ role: "user", content: "hi" }] },
        multitask_strategy: strategy,
      } as RunCreateBody;
      const first = await createBackgroundRun(background, "ann", thread, body, { publish: false, runId });
      const again = await createBackgroundRun(background, "ann", thread, body, { publish: false, runId });
      expect(again).toMatchObject({ runId, status: "pending", createdAt: first.createdAt });
      expect((await runs.list(thread)).map((r) => [r.runId, r.status])).toEqual([[runId, "pending"]]);

      // Two copies at once, the second slower to look at the thread's runs: still one run, pending.
      const atOnce = randomUUID();
      const otherThread = randomUUID();
      const slow = Object.assign(Object.create(runs) as AgentRuns, {
        list: async (threadId: string) => {
          await new Promise((r) => setTimeout(r, 100));
          return runs.list(threadId);
        },
      });
      const slower = { ...background, runDeps: { ...runDeps, runs: slow } } as unknown as BackgroundDeps;
      await Promise.all([
        createBackgroundRun(background, "ann", otherThread, body, { publish: false, runId: atOnce }),
        createBackgroundRun(slower, "ann", otherThread, body, { publish: false, runId: atOnce }),
      ]);
      expect((await runs.list(otherThread)).map((r) => [r.runId, r.status])).toEqual([[atOnce, "pending"]]);
    },
  );
});

describe("a run's outcome", () => {
  it("is written only onto a run still on record: a run deleted meanwhile (its thread erased) stays gone", async () => {
    const thread = randomUUID();
    const [run] = await pending(thread, 1);
    await runs.remove(thread, run!.runId);
    await runs.finish(thread, run!.runId, "error", { code: "thread_not_found", message: "gone" });
    expect(await runs.list(thread)).toEqual([]);
  });
});

describe("a thread's runs", () => {
  it("leave out an outcome-only item an older version wrote onto a deleted run, rather than fail to list", async () => {
    const thread = randomUUID();
    const [run] = await pending(thread, 1);
    await DynamoDBDocumentClient.from(dynamo.client).send(
      new PutCommand({
        TableName: table,
        Item: { pk: thread, sk: `run#${randomUUID()}`, status: "error", updated_at: new Date().toISOString() },
      }),
    );
    expect((await runs.list(thread)).map((r) => r.runId)).toEqual([run!.runId]);
  });
});
