import pLimit from "p-limit";
import { SqlBusy } from "./sql-errors";

export interface Slots {
  /**
   * Waits for a slot at most `waitMs`, then SqlBusy; resolves to the slot's release. A wait that
   * times out leaves the queue: when its turn comes, the slot is handed straight on.
   */
  take(waitMs: number): Promise<() => void>;
  /** requests waiting for a slot now (not those that gave up) */
  readonly waiting: number;
  /** how many hold a slot at once; raising it lets waiting requests in at once */
  concurrency: number;
}

/** Slots for the data engine's work: at most `concurrency` at once, the rest queued by p-limit. */
export function slots(concurrency: number): Slots {
  const limit = pLimit(concurrency);
  // p-limit's own count keeps a wait that gave up until a slot reaches it.
  let waiting = 0;
  return {
    take: (waitMs) =>
      new Promise((resolve, reject) => {
        waiting++;
        let settled = false;
        const timer = setTimeout(() => {
          settled = true;
          waiting--;
          reject(new SqlBusy());
        }, waitMs);
        void limit(() => {
          if (settled) return;
          settled = true;
          waiting--;
          clearTimeout(timer);
          return new Promise<void>((release) => resolve(() => release()));
        });
      }),
    get waiting() {
      return waiting;
    },
    get concurrency() {
      return limit.concurrency;
    },
    set concurrency(n: number) {
      limit.concurrency = n;
    },
  };
}
