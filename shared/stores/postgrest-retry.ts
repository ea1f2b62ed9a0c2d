import { SAVE_RESERVE_MS } from "../deadline";

/**
 * How the PostgREST transport retries. postgrest-js 2 retries on its own only GET/HEAD/OPTIONS
 * requests (never an RPC's POST), on 503/520 or a network error, up to 3 times after 1, 2 and
 * 4 s, or after whatever Retry-After says: 7 s and more, past the deadline of a turn saving
 * itself (shared/deadline.ts keeps 2 s for that) and of a 5-10 s function. supabaseRest turns it
 * off (`retry: false`) and retries here instead, within a budget.
 *
 * Only a 503 is retried: PostgREST answers it when the statement never ran or rolled back (no
 * database connection, the schema cache not loaded yet, the database out of resources), so a
 * retry is safe for every call, writes included. A network error or any other status is not
 * retried: a write may have happened. The callers that must not lose a write (the queue workers)
 * are retried as a whole by their queue.
 */
export interface RetryPolicy {
  /** tries in all, the first included */
  attempts: number;
  /** wait before the 2nd, 3rd... try */
  backoffMs: readonly number[];
  /** no try starts after this long since the first began: a turn's save fits its reserve */
  budgetMs: number;
}

export const POSTGREST_RETRY: RetryPolicy = {
  attempts: 3,
  backoffMs: [100, 300],
  budgetMs: SAVE_RESERVE_MS / 2,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After in ms (PostgREST sends seconds), or undefined when absent or not a number. */
function retryAfterMs(res: Response): number | undefined {
  const header = res.headers.get("retry-after");
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}

/** `fetchImpl`, trying a request again after a 503 as `policy` allows. */
export function retryUnavailable(fetchImpl: typeof fetch, policy: RetryPolicy = POSTGREST_RETRY): typeof fetch {
  return async (input, init) => {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const res = await fetchImpl(input, init);
      if (res.status !== 503 || attempt >= policy.attempts || init?.signal?.aborted) return res;
      const wait = retryAfterMs(res) ?? policy.backoffMs[Math.min(attempt - 1, policy.backoffMs.length - 1)] ?? 0;
      if (Date.now() - started + wait > policy.budgetMs) return res;
      await res.body?.cancel();
      await sleep(wait);
    }
  };
}
