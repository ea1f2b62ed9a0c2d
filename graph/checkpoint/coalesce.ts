import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { batchWriteAll, type RetryPolicy } from "../../shared/stores/batch";

type Item = Record<string, unknown>;

interface Waiting {
  items: Item[];
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Puts from concurrent calls, sent together. A graph step's `putWrites` and the next
 * checkpoint's `put` are issued within the same turn of the event loop; sent as one
 * BatchWriteItem they cost one round trip instead of two. Each caller still resolves only
 * once every one of its items is written, so nothing is acknowledged early; a failure
 * rejects every caller of that flush.
 *
 * Items are keyed (pk, sk) and content-addressed where they repeat (parts, log entries), so
 * two calls naming the same key carry the same item, or the later one is the retry that
 * should win: DynamoDB rejects a batch with a duplicate key, so the last one is kept.
 */
export class WriteCoalescer {
  private waiting: Waiting[] = [];

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly retry: RetryPolicy,
  ) {}

  put(items: Item[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => void this.flush());
      this.waiting.push({ items, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const callers = this.waiting;
    this.waiting = [];
    const byKey = new Map<string, Item>();
    for (const { items } of callers) {
      for (const item of items) byKey.set(`${item.pk as string}\u0000${item.sk as string}`, item);
    }
    try {
      await batchWriteAll(
        this.doc,
        this.tableName,
        [...byKey.values()].map((Item) => ({ PutRequest: { Item } })),
        this.retry,
      );
      for (const c of callers) c.resolve();
    } catch (err) {
      for (const c of callers) c.reject(err);
    }
  }
}
