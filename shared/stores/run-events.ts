import { batchWriteAll } from "./batch";
import { queryItems } from "./query-items";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { CHECKPOINT_TABLE } from "./checkpoint-table";

/** One server-sent event of a run, numbered from 0 in the order the run produced it. */
export interface RunEvent {
  id: number;
  event: string;
  data: unknown;
}

export interface RunEventLogOptions {
  /** how long a run's events stay readable (the table's TTL removes them after) */
  ttlSeconds?: number;
  /** how long events wait to be written together: one write per interval while a run streams */
  flushMs?: number;
  /** how often a follower asks for pages it has not seen, while the run goes on */
  pollMs?: number;
  /** how long a follower waits on a log with no new page before it asks whether the run still goes on */
  quietMs?: number;
}

/** A page holds at most this much of the log's text: under DynamoDB's 400 KB item limit in UTF-8. */
const PAGE_CHARS = 90_000;
const PAGE_DIGITS = 8;
const partition = (runId: string) => `runlog#${runId}`;

/**
 * The durable, expiring log of a run's stream events, so a client that dropped can rejoin
 * (`joinStream`, or a reconnect with `Last-Event-ID`) and a background run can be watched from any
 * instance. In the checkpoint table, under a partition of the run's own, removed by the table's TTL.
 *
 * The log is one text, a JSON line per event (`[event, data]`), cut into pages of at most
 * PAGE_CHARS; a page is written per flush, so a run streaming tokens makes one PutItem per
 * `flushMs` rather than one per token, and one event of any size fits (its line spans pages). The
 * last page says the run ended. A follower reads the pages it has not seen, in order, every
 * `pollMs` (one Query each), and numbers the lines as the writer did.
 *
 * Hand-written: DynamoDB has no append-only stream API short of DynamoDB Streams, which a client
 * cannot read from an arbitrary position, and Redis-like stream semantics are what LangGraph's
 * server gives its clients (event ids, replay after an id).
 */
export class RunEventLog {
  private readonly doc: DynamoDBDocumentClient;
  readonly ttlSeconds: number;
  readonly flushMs: number;
  readonly pollMs: number;
  readonly quietMs: number;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    options: RunEventLogOptions = {},
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
    this.ttlSeconds = options.ttlSeconds ?? 24 * 3600;
    this.flushMs = options.flushMs ?? 100;
    this.pollMs = options.pollMs ?? 250;
    this.quietMs = options.quietMs ?? 2000;
  }

  /** Starts the log of a run: events pushed to it are written a flush at a time, in order. */
  writer(runId: string): RunEventWriter {
    return new RunEventWriter(runId, this.flushMs, (page, text, done) => this.putPage(runId, page, text, done));
  }

  /**
   * The run's events after `afterId` (-1 for all), then each one as it is written, until the log
   * says the run ended, `signal` aborts, or `stillRunning` says the run is over though its log
   * never said so (a writer that crashed).
   */
  async *follow(
    runId: string,
    afterId: number,
    options: { signal?: AbortSignal; stillRunning?: () => Promise<boolean> } = {},
  ): AsyncGenerator<RunEvent> {
    let lastPage = -1;
    let text = "";
    let next = 0;
    let quiet = 0;
    while (!options.signal?.aborted) {
      const pages = await this.pagesAfter(runId, lastPage);
      let done = false;
      for (const page of pages) {
        lastPage = page.page;
        text += page.text;
        done ||= page.done;
      }
      // Whole lines only: the last one may go on in the next page.
      const end = text.lastIndexOf("\n");
      if (end >= 0) {
        for (const line of text.slice(0, end).split("\n")) {
          const id = next++;
          if (id <= afterId) continue;
          const [event, data] = JSON.parse(line) as [string, unknown];
          yield { id, event, data };
        }
        text = text.slice(end + 1);
      }
      if (done) return;
      quiet = pages.length === 0 ? quiet + 1 : 0;
      // Every quietMs without a page: is there still a run to wait for?
      if (quiet > 0 && quiet % Math.max(1, Math.round(this.quietMs / this.pollMs)) === 0 && options.stillRunning)
        if (!(await options.stillRunning())) return;
      await sleep(this.pollMs, options.signal);
    }
  }

  /** Whether the run has any log at all (a run that was not resumable has none). */
  async exists(runId: string): Promise<boolean> {
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": partition(runId) },
        ConsistentRead: true,
        Limit: 1,
        ProjectionExpression: "pk",
      }),
    );
    return (out.Items?.length ?? 0) > 0;
  }

  /**
   * Removes the run's log (its thread deleted, its user erased): it holds the run's messages, so
   * it goes with them rather than with the TTL. Before the run's record, which names it.
   */
  async remove(runId: string): Promise<void> {
    const pages = await queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": partition(runId) },
      ProjectionExpression: "pk, sk",
      ConsistentRead: true,
    });
    await batchWriteAll(
      this.doc,
      this.tableName,
      pages.map((page) => ({ DeleteRequest: { Key: { pk: page.pk, sk: page.sk } } })),
    );
  }

  private async pagesAfter(runId: string, lastPage: number) {
    const items = await queryItems(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: "pk = :pk AND sk > :after",
      ExpressionAttributeValues: { ":pk": partition(runId), ":after": pageKey(lastPage) },
      ConsistentRead: true,
    });
    return items.map((item) => ({ page: Number(item.page), text: String(item.text ?? ""), done: item.done === true }));
  }

  private async putPage(runId: string, page: number, text: string, done: boolean) {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: partition(runId),
          sk: pageKey(page),
          page,
          text,
          ...(done ? { done: true } : {}),
          [CHECKPOINT_TABLE.ttlAttribute]: Math.floor(Date.now() / 1000) + this.ttlSeconds,
        },
        // A page is written once: a second writer of the same run (a redelivered message) fails here.
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }
}

const pageKey = (page: number) => (page < 0 ? "p#" : `p#${String(page).padStart(PAGE_DIGITS, "0")}`);

/**
 * A run's side of the log: `push` numbers an event at once (the id the live stream sends with it)
 * and writes it with the others of its interval; `close` writes what is left and marks the end.
 * Writes go one after another, so pages appear in order.
 */
export class RunEventWriter {
  private nextId = 0;
  private pending = "";
  private page = 0;
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private failure?: unknown;
  private closed = false;

  constructor(
    readonly runId: string,
    private readonly flushMs: number,
    private readonly put: (page: number, text: string, done: boolean) => Promise<void>,
  ) {}

  /** The event's id: the same number a follower gives it. */
  push(event: string, data: unknown): number {
    if (this.closed) throw new Error("the run's event log is closed");
    this.pending += `${JSON.stringify([event, data ?? null])}\n`;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.flushMs);
    return this.nextId++;
  }

  /** Writes what is pending and marks the log ended; rejects if any write failed. */
  async close(): Promise<void> {
    if (this.closed) return this.writing;
    this.closed = true;
    clearTimeout(this.timer);
    this.flush(true);
    await this.writing;
    if (this.failure) throw this.failure;
  }

  private flush(done = false) {
    const text = this.pending;
    this.pending = "";
    if (!text && !done) return;
    const chunks = pagesOf(text);
    this.writing = this.writing.then(async () => {
      if (this.failure) return;
      try {
        for (const [i, chunk] of chunks.entries()) await this.put(this.page++, chunk, done && i === chunks.length - 1);
      } catch (err) {
        this.failure = err;
      }
    });
  }
}

/** The text cut into pages, never between the two halves of a surrogate pair (a page is stored as UTF-8). */
function pagesOf(text: string): string[] {
  const pages: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + PAGE_CHARS, text.length);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end -= 1;
    pages.push(text.slice(start, end));
    start = end;
  }
  return pages.length > 0 ? pages : [""];
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
