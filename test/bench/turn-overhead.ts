// What the platform adds to a chat turn beside the model: DynamoDB requests per turn type, and
// the turn's wall time on dynalite + PGlite with the offline stand-in model (deterministic, not a
// language model, so the time measured is the platform's own) at 1, 8 and 32 concurrent clients.
// The chat service is the production wiring (graph/chat/runtime.ts), attachments and data engine
// included, as Lambda and the local stack build it.
import { performance } from "node:perf_hooks";
import type { ChatTurn } from "../../graph/chat/service";
import { meter } from "../support/dynamo-meter";
import { productionChat } from "../support/production-chat";
import { backendsHarness } from "../support/stack";
import { median, printTable } from "./table";

const TURNS_PER_CLIENT = 12;

const commandsOf = (byCommand: Record<string, number>) =>
  Object.entries(byCommand)
    .map(([command, n]) => `${n} ${command.replace(/Command$/, "")}`)
    .join(", ");

export async function run() {
  const harness = await backendsHarness();
  try {
    const production = await productionChat(harness);
    const { chat } = production;
    const m = meter(harness.dynamo.client);
    const counted = async (turn: () => Promise<unknown>) => {
      m.reset();
      await turn();
      return { requests: m.requests, commands: commandsOf(m.byCommand) };
    };
    const session = async (user: string) => (await chat.reply({ userId: user, message: "hello there" })).sessionId;

    // Requests per turn type, each on a session that already has a turn (but the new session's).
    const rows: Record<string, string | number>[] = [];
    // Before: the production wiring as issue 30 found it, a Query of the session's files on every turn.
    const row = (
      type: string,
      { requests, commands }: { requests: number; commands: string },
      goal: string,
      before: string,
    ) => rows.push({ "turn type": type, requests, "before (issue 30)": before, goal, commands });
    const s1 = await session("a");
    row(
      "plain",
      await counted(() => chat.reply({ userId: "a", sessionId: s1, message: "thanks, all good" })),
      "≤ 4",
      "5",
    );
    const withData = await session("d");
    await production.attachCsv("d", withData, "sales.csv", "region,amount\nnorth,1\nsouth,2\n");
    row(
      "plain, a data file in the session",
      await counted(() => chat.reply({ userId: "d", sessionId: withData, message: "thanks, all good" })),
      "≤ 4",
      "5",
    );
    row(
      "one tool call",
      await counted(() => chat.reply({ userId: "a", sessionId: s1, message: "remember that my cat is Tom" })),
      "≤ 6",
      "5",
    );
    row(
      "streamed",
      await counted(() =>
        chat.reply({ userId: "a", sessionId: s1, message: "thanks again" }, { onToken: () => undefined }),
      ),
      "≤ 4",
      "5",
    );
    row("new session", await counted(() => chat.reply({ userId: "a", message: "hello there" })), "≤ 4", "5");
    // With a quota set, the same wiring counts the turn (issue 31): the admission is a request of its own,
    // the tokens settle in the lease's release (one TransactWriteItems).
    const quota = await productionChat(harness, { USER_QUOTAS: '{"turnsPerMinute":1000,"tokensPerDay":100000000}' });
    const q = (await quota.chat.reply({ userId: "q", message: "hello there" })).sessionId;
    row(
      "plain, USER_QUOTAS set",
      await counted(() => quota.chat.reply({ userId: "q", sessionId: q, message: "thanks, all good" })),
      "≤ 4",
      "",
    );
    quota.close();
    // A run that lasts: every 500 ms it reads its lease item for a cancel request (issue 29's cancel
    // within a second), so a reply streamed for 2 s adds about 4 GetItems to the 4 of any turn.
    const slow = await productionChat(harness, { OFFLINE_STREAM_DELAY_MS: "100" });
    const sl = (await slow.chat.reply({ userId: "s", message: "hello there" })).sessionId;
    m.reset();
    const at = performance.now();
    await slow.chat.reply(
      { userId: "s", sessionId: sl, message: "Remember that the review covers pricing, plans and seats" },
      { onToken: () => undefined },
    );
    const slowTurn = {
      requests: m.requests,
      commands: commandsOf(m.byCommand),
      seconds: (performance.now() - at) / 1000,
    };
    row(`one tool call, its reply streamed for ${slowTurn.seconds.toFixed(1)} s`, slowTurn, "≤ 6 + 1 per 0.5 s", "");
    slow.close();
    // A double-text: the second message waits for the first's lease, polling while it waits.
    const s2 = await session("b");
    m.reset();
    const first = chat.reply({ userId: "b", sessionId: s2, message: "thanks, all good" });
    const queued = chat.reply({ userId: "b", sessionId: s2, message: "one more thing", ifBusy: "queue" });
    await Promise.all([first, queued]);
    row(
      "two at once, the second queued (both turns)",
      { requests: m.requests, commands: commandsOf(m.byCommand) },
      "≤ 8 + polls",
      "",
    );
    m.detach();
    printTable("DynamoDB requests per chat turn (dynalite)", rows);

    // Wall time per plain turn, each client on its own session, its turns one after another.
    const latency: Record<string, string | number>[] = [];
    for (const clients of [1, 8, 32]) {
      const times: number[] = [];
      const sessions = await Promise.all(Array.from({ length: clients }, (_, i) => session(`c${clients}-${i}`)));
      const started = performance.now();
      await Promise.all(
        sessions.map(async (sessionId, i) => {
          for (let t = 0; t < TURNS_PER_CLIENT; t++) {
            const turn: ChatTurn = { userId: `c${clients}-${i}`, sessionId, message: `fine, thanks ${t}` };
            const at = performance.now();
            await chat.reply(turn);
            times.push(performance.now() - at);
          }
        }),
      );
      const wall = performance.now() - started;
      const sorted = [...times].sort((a, b) => a - b);
      latency.push({
        clients,
        turns: times.length,
        "median ms/turn": median(times).toFixed(1),
        "p95 ms/turn": sorted[Math.floor(sorted.length * 0.95)]!.toFixed(1),
        "turns/s": ((times.length / wall) * 1000).toFixed(0),
      });
    }
    printTable(
      `Plain turn wall time, ${TURNS_PER_CLIENT} turns per client (offline stand-in model, dynalite, PGlite, one process)`,
      latency,
    );
    production.close();
  } finally {
    await harness.close();
  }
}
