import pLimit from "p-limit";
import { SqlBusy } from "./sql-errors";

export interface Slots {
  /**
   * Waits for a slot at most `waitMs`, then SqlBusy; resolves to the slot's release. A wait that
   * times out leaves the queue: when its turn comes, the slot is handed straight on.
   */
  take(waitMs: number): Promise<() => void>;
  /** requests waiting for a slot */
  readonly waiting: number;
  /** how many hold a slot at once; a change applies to the next take */
  concurrency: number;
}

/** Slots for the data engine's work: at most `concurrency` at once, the rest queued by p-limit. */
export function slots(concurrency: number): Slots {
  const limit = pLimit(concurrency);
  return {
    take: (waitMs) =>
      new Promise((resolve, reject) => {
        let gaveUp = false;
        const timer = setTimeout(() => {
          gaveUp = true;
          reject(new SqlBusy());
        }, waitMs);
        void limit(() => {
          if (gaveUp) return;
          clearTimeout(timer);
          return new Promise<void>((release) => resolve(() => release()));
        });
      }),
    get waiting() {
      return limit.pendingCount;
    },
    get concurrency() {
      return limit.concurrency;
    },
    set concurrency(n: number) {
      limit.concurrency = n;
    },
  };
}
