// The local stack under a long run of chat turns over HTTP, as `npm start` serves them: resident
// memory every 1,000 turns, and latency early and late. The offline stand-in model answers (not a
// language model), so what grows is the platform's. SOAK_TURNS (default 10,000) bounds the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startLocalStack } from "../../infra/local/stack";
import { median, printTable } from "./table";

const CLIENTS = 8;
/** Turns per session: a client starts a new session after this many, as users do. */
const SESSION_TURNS = 60;

export async function run() {
  const total = Number(process.env.SOAK_TURNS ?? 10_000);
  const dataDir = mkdtempSync(join(tmpdir(), "soak-"));
  const stack = await startLocalStack({
    DATA_DIR: dataDir,
    PORT: "0",
    OFFLINE_STREAM_DELAY_MS: "0",
    LOG_LEVEL: "SILENT",
  });
  const rows: Record<string, string | number>[] = [];
  const turnMs: number[][] = Array.from({ length: SESSION_TURNS }, () => []);
  let done = 0;
  let windowTimes: number[] = [];
  const started = performance.now();
  try {
    const chat = async (user: string, body: Record<string, unknown>) => {
      const res = await fetch(`${stack.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-user-id": user },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`chat answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { session_id: string };
    };
    const client = async (c: number) => {
      let sessionId: string | undefined;
      let turn = 0;
      while (done < total) {
        const at = performance.now();
        const reply = await chat(`soak-${c}`, {
          message: `fine, thanks (${turn})`,
          ...(sessionId ? { session_id: sessionId } : {}),
        });
        const ms = performance.now() - at;
        turnMs[turn]!.push(ms);
        windowTimes.push(ms);
        sessionId = reply.session_id;
        turn = (turn + 1) % SESSION_TURNS;
        if (turn === 0) sessionId = undefined;
        done++;
        if (done % 1000 === 0) {
          rows.push({
            turns: done,
            "RSS MB": (process.memoryUsage().rss / 2 ** 20).toFixed(0),
            "heap MB": (process.memoryUsage().heapUsed / 2 ** 20).toFixed(0),
            // Array buffers hold PGlite's WebAssembly memory (Postgres's own buffers) and LevelDB reads.
            "array buffers MB": (process.memoryUsage().arrayBuffers / 2 ** 20).toFixed(0),
            "median ms/turn": median(windowTimes).toFixed(1),
            "elapsed s": ((performance.now() - started) / 1000).toFixed(0),
          });
          windowTimes = [];
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  } finally {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  printTable(`Local stack over HTTP, ${CLIENTS} clients, a new session every ${SESSION_TURNS} turns`, rows);
  const first = Number(rows[0]?.["RSS MB"]);
  const last = Number(rows.at(-1)?.["RSS MB"]);
  printTable("Goals", [
    { measure: `RSS at ${rows.at(-1)?.turns} turns / RSS at 1,000`, value: (last / first).toFixed(2), goal: "≤ 1.5" },
    {
      measure: "median ms at a session's turn 60 / turn 1",
      value: (median(turnMs[SESSION_TURNS - 1]!) / median(turnMs[0]!)).toFixed(2),
      goal: "≤ 1.1",
    },
  ]);
}
