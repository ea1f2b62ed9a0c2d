import { SAVE_RESERVE_MS } from "../../../shared/deadline";
import { postgrestRpc, supabaseRest } from "../../../shared/stores/postgrest";
import { POSTGREST_RETRY } from "../../../shared/stores/postgrest-retry";

// The PostgREST transport's retries, on a fake fetch and fake timers: what is retried, how often,
// and that the whole call ends within the budget a turn's save leaves it.
type Answer = { status: number; body?: unknown; headers?: Record<string, string>; takesMs?: number } | Error;

function fakeSupabase(answers: Answer[]) {
  const attempts: { at: number; method: string; key: string | null }[] = [];
  const started = Date.now();
  const fetchImpl: typeof fetch = async (_input, init) => {
    attempts.push({
      at: Date.now() - started,
      method: init?.method ?? "GET",
      key: new Headers(init?.headers).get("apikey"),
    });
    const answer = answers[Math.min(attempts.length - 1, answers.length - 1)]!;
    if (answer instanceof Error) throw answer;
    if (answer.takesMs) await new Promise((r) => setTimeout(r, answer.takesMs));
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { "content-type": "application/json", ...answer.headers },
    });
  };
  return { fetchImpl, attempts };
}

const UNAVAILABLE = {
  status: 503,
  body: { code: "PGRST000", message: "Could not connect with the database", details: null, hint: null },
};

/**
 * Runs a call to its end on fake time; returns its outcome and how long it took. Time is moved on
 * by a bounded span (well past the retry budget and the slowest fake answer), not "until no timer
 * is left": files share a worker (isolate: false), and a local stack another file left running
 * there has interval timers of its own, which fake timers also catch and would never run out of.
 */
async function settle<T>(call: () => Promise<T>) {
  const started = Date.now();
  // When it ended on fake time: the span below runs on past it.
  const outcome = call().then(
    (value): { value?: T; error?: Error; endedAt: number } => ({ value, endedAt: Date.now() }),
    (error: Error): { value?: T; error?: Error; endedAt: number } => ({ error, endedAt: Date.now() }),
  );
  await vi.advanceTimersByTimeAsync(SETTLE_SPAN_MS);
  const { endedAt, ...ended } = await outcome;
  return { ...ended, tookMs: endedAt - started };
}

const SETTLE_SPAN_MS = 10_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("PostgREST transport retries", () => {
  it("tries a call again after a 503, 100 ms later, and returns the answer", async () => {
    const supabase = fakeSupabase([UNAVAILABLE, { status: 200, body: true }]);
    const rpc = postgrestRpc(supabaseRest("https://x.supabase.co", "key", supabase.fetchImpl));
    expect(await settle(() => rpc.call("ping", {}))).toEqual({ value: true, tookMs: 100 });
    expect(supabase.attempts.map((a) => [a.at, a.method])).toEqual([
      [0, "POST"],
      [100, "POST"],
    ]);
  });

  it("gives up after 3 tries in 400 ms, with PostgREST's error", async () => {
    const supabase = fakeSupabase([UNAVAILABLE]);
    const rpc = postgrestRpc(supabaseRest("https://x.supabase.co", "key", supabase.fetchImpl));
    const { error, tookMs } = await settle(() => rpc.call("ping", {}));
    expect(error?.message).toBe("ping failed: Could not connect with the database");
    expect(supabase.attempts.map((a) => a.at)).toEqual([0, 100, 400]);
    expect(tookMs).toBe(400);
  });

  it("starts no try past the budget: slow 503s end the call early", async () => {
    const supabase = fakeSupabase([{ ...UNAVAILABLE, takesMs: 800 }]);
    const rpc = postgrestRpc(supabaseRest("https://x.supabase.co", "key", supabase.fetchImpl));
    const { error, tookMs } = await settle(() => rpc.call("ping", {}));
    expect(error).toBeDefined();
    // 800 ms, then 100 ms' wait fits the 1 s budget; 1.7 s plus 300 ms would not.
    expect(supabase.attempts.map((a) => a.at)).toEqual([0, 900]);
    expect(tookMs).toBe(1_700);
  });

  it("waits what Retry-After says when it fits the budget, and gives up at once when it does not", async () => {
    const now = fakeSupabase([
      { ...UNAVAILABLE, headers: { "Retry-After": "0" } },
      { status: 200, body: 1 },
    ]);
    const rpcNow = postgrestRpc(supabaseRest("https://x.supabase.co", "key", now.fetchImpl));
    expect(await settle(() => rpcNow.call("ping", {}))).toEqual({ value: 1, tookMs: 0 });
    expect(now.attempts).toHaveLength(2);

    const later = fakeSupabase([
      { ...UNAVAILABLE, headers: { "Retry-After": "5" } },
      { status: 200, body: 1 },
    ]);
    const rpcLater = postgrestRpc(supabaseRest("https://x.supabase.co", "key", later.fetchImpl));
    expect(await settle(() => rpcLater.call("ping", {}))).toMatchObject({ error: expect.any(Error), tookMs: 0 });
    expect(later.attempts).toHaveLength(1);
  });

  it("does not retry what may have run: a network error, a 500, a 520, a 504, a 400", async () => {
    for (const answer of [
      new TypeError("fetch failed"),
      { status: 500, body: { code: "XX000", message: "internal", details: null, hint: null } },
      { status: 520, body: { message: "origin error" } },
      { status: 504, body: { code: "PGRST003", message: "timed out", details: null, hint: null } },
      { status: 400, body: { code: "22P02", message: "bad", details: null, hint: null } },
    ]) {
      const supabase = fakeSupabase([answer, { status: 200, body: true }]);
      const rpc = postgrestRpc(supabaseRest("https://x.supabase.co", "key", supabase.fetchImpl));
      expect(await settle(() => rpc.call("record_turn", {}))).toMatchObject({ error: expect.any(Error), tookMs: 0 });
      expect(supabase.attempts).toHaveLength(1);
    }
  });

  it("turns off postgrest-js's own retries (1, 2 and 4 s on a GET)", async () => {
    const supabase = fakeSupabase([UNAVAILABLE]);
    const rest = supabaseRest("https://x.supabase.co", "key", supabase.fetchImpl);
    const { value, tookMs } = await settle(async () => rest.from("agent_memories").select("id"));
    expect(value).toMatchObject({ status: 503 });
    expect(supabase.attempts.map((a) => a.at)).toEqual([0, 100, 400]);
    expect(tookMs).toBe(400);
  });

  it("reads a rotated key again for each try", async () => {
    const supabase = fakeSupabase([UNAVAILABLE, { status: 200, body: true }]);
    let key = "key-1";
    const rpc = postgrestRpc(
      supabaseRest(
        "https://x.supabase.co",
        async () => {
          const current = key;
          key = "key-2";
          return current;
        },
        supabase.fetchImpl,
      ),
    );
    expect(await settle(() => rpc.call("ping", {}))).toMatchObject({ value: true });
    expect(supabase.attempts.map((a) => a.key)).toEqual(["key-1", "key-2"]);
  });

  it("keeps every wait of the policy inside a budget that fits the reserve a turn keeps to save", () => {
    const waits = POSTGREST_RETRY.backoffMs.slice(0, POSTGREST_RETRY.attempts - 1);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(POSTGREST_RETRY.budgetMs);
    expect(POSTGREST_RETRY.budgetMs).toBeLessThan(SAVE_RESERVE_MS);
  });
});
