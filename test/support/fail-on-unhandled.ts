/**
 * Fails the test during which a promise rejection went unhandled (or an exception uncaught).
 *
 * Vitest already reports such errors and fails the run (`dangerouslyIgnoreUnhandledErrors` is off by
 * default, and in the forks pool its own listener catches them), but it reports them beside the
 * results: every test still shows as passed, and the error names no test. In the local stack a
 * dropped rejection kills `npm start`; here it must fail the test that caused it. Registered once
 * per process, as a setup file (vitest.config.ts `setupFiles`).
 */
const MARK = Symbol.for("agent.failOnUnhandled");
const state = globalThis as typeof globalThis & { [MARK]?: unknown[] };

if (!state[MARK]) {
  const seen: unknown[] = [];
  state[MARK] = seen;
  process.on("unhandledRejection", (reason) => seen.push(reason));
  process.on("uncaughtException", (err) => seen.push(err));
}

/** Throws once for everything collected since the last check, so each error fails one test only. */
function failOnCollected(): void {
  const seen = state[MARK]!;
  if (seen.length === 0) return;
  const errors = seen.splice(0);
  throw new AggregateError(
    errors,
    `${errors.length} unhandled rejection(s) or uncaught exception(s) while this test ran: ${errors
      .map((e) => (e instanceof Error ? e.message : String(e)))
      .join("; ")}`,
  );
}

afterEach(failOnCollected);
afterAll(failOnCollected);
