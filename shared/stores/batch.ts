import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import pLimit from "p-limit";

type Item = Record<string, unknown>;
type Key = Record<string, unknown>;
export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Key } };

/** DynamoDB's per-request limits for the batch APIs. */
const WRITE_BATCH = 25;
const GET_BATCH = 100;
/** Batches in flight at once: enough to hide latency, few enough not to self-throttle a partition. */
const CONCURRENCY = 4;

export interface RetryPolicy {
  /**
   * Attempts before giving up loudly: for the batch helpers, attempts in a row that made no
   * progress (a response at its size cap answers part of a batch, and the rest is still coming).
   */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 10, baseDelayMs: 25, maxDelayMs: 2000 };

/**
 * A read-then-conditional-write that lost to another write, tried again: many, with short waits
 * (the writes it loses to are single items, quick), so a burst of concurrent writers all get in.
 */
export const CONFLICT_RETRY: RetryPolicy = { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 200 };

/** Full-jitter exponential backoff, as the AWS architecture blog recommends for batch retries. */
export function backoff(attempt: number, policy: RetryPolicy): Promise<void> {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * cap));
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * BatchWriteItem until every request is processed. The SDK retries throttled
 * calls, but not `UnprocessedItems`, which DynamoDB returns with a 200: those are
 * retried here with backoff, and if they still fail the call throws. Nothing is
 * dropped silently.
 */
export async function batchWriteAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  requests: WriteRequest[],
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<void> {
  const limit = pLimit(CONCURRENCY);
  await Promise.all(
    chunk(requests, WRITE_BATCH).map((batch) => limit(() => writeOneBatch(doc, tableName, batch, policy))),
  );
}

async function writeOneBatch(
  doc: DynamoDBDocumentClient,
  tableName: string,
  batch: WriteRequest[],
  policy: RetryPolicy,
): Promise<void> {
  await untilProcessed(batch, "write(s)", policy, async (pending) => {
    const out = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
    return (out.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
  });
}

/**
 * Sends a batch, then what each answer left unprocessed, until nothing is left. Every retry waits
 * (AWS asks for backoff on unprocessed items), the longer after more answers in a row that made
 * no progress; `policy.maxAttempts` of those in a row, and it gives up loudly. An answer that made
 * progress starts the count again: a response at its size cap answers part of a batch each time.
 */
async function untilProcessed<T>(
  batch: T[],
  what: string,
  policy: RetryPolicy,
  send: (pending: T[]) => Promise<T[]>,
): Promise<void> {
  let pending = batch;
  for (let stalled = 0, first = true; pending.length > 0; first = false) {
    if (!first) await backoff(stalled + 1, policy);
    const left = await send(pending);
    stalled = left.length < pending.length ? 0 : stalled + 1;
    pending = left;
    if (pending.length > 0 && stalled >= policy.maxAttempts)
      throw new Error(
        `DynamoDB left ${pending.length} ${what} unprocessed after ${policy.maxAttempts} attempts without progress`,
      );
  }
}

/** BatchGetItem with consistent reads, retrying `UnprocessedKeys` the same way. */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: Key[],
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<Item[]> {
  const limit = pLimit(CONCURRENCY);
  const results = await Promise.all(
    chunk(keys, GET_BATCH).map((batch) =>
      limit(async () => {
        const found: Item[] = [];
        await untilProcessed(batch, "key(s)", policy, async (pending) => {
          const out = await doc.send(
            new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
          );
          found.push(...((out.Responses?.[tableName] ?? []) as Item[]));
          return (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Key[];
        });
        return found;
      }),
    ),
  );
  return results.flat();
}
