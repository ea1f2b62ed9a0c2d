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
  /** Attempts per batch before giving up loudly. */
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
  let pending: WriteRequest[] = batch;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= policy.maxAttempts) {
      throw new Error(`DynamoDB left ${pending.length} write(s) unprocessed after ${policy.maxAttempts} attempts`);
    }
    if (attempt > 0) await backoff(attempt, policy);
    const out = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
    pending = (out.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
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
        let pending: Key[] = batch;
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt >= policy.maxAttempts) {
            throw new Error(`DynamoDB left ${pending.length} key(s) unprocessed after ${policy.maxAttempts} attempts`);
          }
          if (attempt > 0) await backoff(attempt, policy);
          const out = await doc.send(
            new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
          );
          found.push(...((out.Responses?.[tableName] ?? []) as Item[]));
          pending = (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Key[];
        }
        return found;
      }),
    ),
  );
  return results.flat();
}
