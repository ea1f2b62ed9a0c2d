// Runs that outlive their request (issue 29), on the local stack with the offline model: how soon a
// background run's first event reaches a client that joined its stream, what a background run costs
// in DynamoDB requests (the create route, the worker, its event log), and what following a joined
// stream costs per second. The stack's own DynamoDB client is metered, so every request the
// production handlers make is counted; the bench waits for runs through a client of its own.
import { Client } from "@langchain/langgraph-sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startLocalStack } from "../../infra/local/stack";
import { localDynamoClient } from "../../infra/local/dynamo";
import { AgentRuns } from "../../shared/stores/agent-runs";
import { RunEventLog } from "../../shared/stores/run-events";
import { meter } from "../support/dynamo-meter";
import { median, printTable } from "./table";

const ROUNDS = 10;
const human = (content: string) => ({ messages: [{ type: "human", content }] });

export async function run() {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-runs-"));
  const stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT" });
  try {
    const client = new Client({ apiUrl: stack.url, defaultHeaders: { "x-user-id": "bench" } });
    // The bench's own view of the runs, on a client the meter does not see.
    const runs = new AgentRuns(localDynamoClient(stack.dynamo.endpoint), "agent-checkpoints");
    const waitFor = async (threadId: string, runId: string) => {
      for (;;) {
        const status = (await runs.get(threadId, runId))?.status;
        if (status && status !== "pending" && status !== "running") return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const firstEvent: number[] = [];
    const firstToken: number[] = [];
    const done: number[] = [];
    const perRun: { requests: number; byCommand: Record<string, number> }[] = [];
    // Every function's own client (each holds to its grants): the create route's, the worker's.
    const m = meter([...stack.functionDynamo.values()]);
    for (let i = 0; i < ROUNDS + 1; i++) {
      const thread = await client.threads.create();
      // Requests of the run itself: the create route, the worker, the log; nobody joins.
      m.reset();
      const quiet = await client.runs.create(thread.thread_id, "chat", { input: human("hi") });
      await waitFor(thread.thread_id, quiet.run_id);
      if (i > 0) perRun.push({ requests: m.requests, byCommand: { ...m.byCommand } });

      // A client that joins at once: create to its first event, and to the first token.
      const started = performance.now();
      const run = await client.runs.create(thread.thread_id, "chat", {
        input: human("How much does the Pro plan cost?"),
        streamMode: ["messages-tuple", "values"],
      });
      let first: number | undefined;
      let token: number | undefined;
      for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) {
        first ??= performance.now() - started;
        if (part.event === "messages") token ??= performance.now() - started;
      }
      if (i > 0) {
        firstEvent.push(first!);
        firstToken.push(token!);
        done.push(performance.now() - started);
      }
    }
    m.detach();

    const commands = [...new Set(perRun.flatMap((r) => Object.keys(r.byCommand)))].sort();
    const byCommand = (name: string) => median(perRun.map((r) => r.byCommand[name] ?? 0));
    // The SDK names a document client's commands as it sends them (PutCommand, QueryCommand...).
    const count = (m: { byCommand: Record<string, number> }, op: string) =>
      Object.entries(m.byCommand)
        .filter(([name]) => name.replace(/Item/, "").startsWith(op))
        .reduce((n, [, v]) => n + v, 0);
    printTable(`background runs on the local stack, ${ROUNDS} rounds (medians; offline model, one-word answer "hi")`, [
      {
        measure: "DynamoDB requests per background run (create route + worker + its event log)",
        value: median(perRun.map((r) => r.requests)).toFixed(0),
        detail: commands.map((c) => `${c.replace(/Command$/, "")} ${byCommand(c)}`).join(", "),
      },
      {
        measure: "runs.create to the first event of a joined stream, ms",
        value: median(firstEvent).toFixed(0),
        detail: "the joinStream starts right after create answers",
      },
      { measure: "runs.create to the first token, ms", value: median(firstToken).toFixed(0), detail: "" },
      { measure: "runs.create to the run's end, ms", value: median(done).toFixed(0), detail: "" },
    ]);

    // Following a joined stream: a writer pushing an event every 20 ms for 3 s, one follower.
    const followMeter = meter(stack.dynamo.client);
    const log = new RunEventLog(stack.dynamo.client, "agent-checkpoints");
    const runId = `bench-${Date.now()}`;
    const writer = log.writer(runId);
    const following = (async () => {
      let n = 0;
      for await (const _ of log.follow(runId, -1)) n++;
      return n;
    })();
    const t0 = performance.now();
    while (performance.now() - t0 < 3000) {
      writer.push("messages", [{ content: "token " }, {}]);
      await new Promise((r) => setTimeout(r, 20));
    }
    await writer.close();
    const events = await following;
    const seconds = (performance.now() - t0) / 1000;
    followMeter.detach();
    printTable("following a joined stream (RunEventLog: a page per 100 ms written, read every 250 ms)", [
      {
        "events per second": (events / seconds).toFixed(0),
        "writer PutItem per second": (count(followMeter, "Put") / seconds).toFixed(1),
        "follower Query per second": (count(followMeter, "Query") / seconds).toFixed(1),
        "events delivered": `${events} of ${events}`,
      },
    ]);
  } finally {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
