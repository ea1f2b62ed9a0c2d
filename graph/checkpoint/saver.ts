import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  ScanCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { isDeepStrictEqual } from "node:util";
import { deepCopy } from "./deep-copy";
import {
  batchGetAll,
  batchWriteAll,
  DEFAULT_RETRY,
  type RetryPolicy,
  type WriteRequest,
} from "../../shared/stores/batch";
import {
  decodeChannels,
  encodeChannels,
  MissingPieceError,
  type Chains,
  type Descriptors,
  type Elements,
  type LogEntry,
  type ValueSource,
} from "./channel-values";
import { WriteCoalescer } from "./coalesce";
import { EntryCache } from "./entry-cache";
import { HIGH, keys, LEGACY, parseSortKey } from "./keys";
import { fromInline, toInline, type Inline } from "./inline";
import { packPayload, partKeys, unpackPayload, type PayloadAttrs } from "./payload";
import { CHECKPOINT_TABLE } from "./schema";

export interface DynamoDBSaverOptions {
  client: DynamoDBClient;
  tableName: string;
  serde?: SerializerProtocol;
  /** Expire every item this many days after it was last needed. Off when unset. */
  ttlDays?: number;
  /** Retries for the batch APIs' unprocessed items. */
  retry?: Partial<RetryPolicy>;
  /** Checkpoints whose channel descriptors are remembered, so a put can reuse them without a read. */
  cacheSize?: number;
  /** Where a skipped, incomplete checkpoint is reported. */
  warn?: (message: string) => void;
}

/** The checkpoint item's payload, JSON then compressed. */
interface CheckpointDoc {
  /** parent checkpoint id */
  p?: string;
  /** the checkpoint without channel_values */
  c: Inline;
  m: Inline;
  ch: Descriptors;
}

interface RawCheckpoint {
  ns: string;
  id: string;
  item: StoredItem;
  writes: StoredItem[];
  /** in the legacy layout */
  legacy?: boolean;
}

export type StoredItem = PayloadAttrs & Record<string, unknown> & { sk: string };

/** Batch size for BatchWriteItem; a put that fits is one request. */
const ONE_BATCH = 25;
/** Items the first page of a latest-checkpoint Query asks for: the checkpoint plus its usual few writes. */
const LATEST_PAGE = 8;
/**
 * Estimated memory for the log entries and decoded messages kept in the process: a few hundred
 * long conversations on a 1 GB Lambda, a small share of it.
 */
const ENTRY_CACHE_BYTES = 64 * 1024 * 1024;
const LIST_PAGE = 100;

/**
 * A LangGraph checkpoint saver on one DynamoDB table.
 *
 * Cost model: a normal `put` is one BatchWriteItem holding the checkpoint item and
 * only the channel data that is new since the parent (see channel-values.ts), so the
 * bytes written per step do not grow with the conversation. `getTuple` is one Query
 * (checkpoint and its writes sort together) plus one parallel round of reads for
 * the channel data. All reads are strongly consistent.
 *
 * Concurrency: checkpoint ids are time-ordered uuid6 values, so two runs writing the
 * same thread never overwrite each other's checkpoints; each builds its own branch
 * from its parent, and stored messages are addressed by hash chain so the branches
 * share what they have in common without clobbering. The latest checkpoint (highest
 * id) wins a later `getTuple`: the other run's turn survives on a sibling branch
 * (visible through `list`) but is not in the thread's current state. Callers that
 * need one writer per thread hold a lease around the run.
 */
export class DynamoDBSaver extends BaseCheckpointSaver {
  private readonly doc: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly ttlSeconds?: number;
  private readonly retry: RetryPolicy;
  private readonly cache = new Map<string, Remembered>();
  private readonly entries = new EntryCache(ENTRY_CACHE_BYTES);
  private readonly cacheSize: number;
  private readonly warn: (message: string) => void;
  private readonly writes: WriteCoalescer;
  /** per thread, its latest root checkpoint as a caller read it under its lease (prime) */
  private readonly primed = new Map<string, { tuple: CheckpointTuple | undefined }>();

  constructor(options: DynamoDBSaverOptions) {
    super(options.serde);
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.tableName = options.tableName;
    if (options.ttlDays !== undefined) {
      if (!(options.ttlDays > 0)) throw new Error("ttlDays must be a positive number of days");
      this.ttlSeconds = Math.round(options.ttlDays * 86_400);
    }
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.cacheSize = options.cacheSize ?? 1000;
    this.warn = options.warn ?? ((m) => console.warn(m));
    this.writes = new WriteCoalescer(this.doc, this.tableName, this.retry);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const id = getCheckpointId(config);
    const primed = !id && ns === "" ? this.primed.get(threadId) : undefined;
    // A copy each time: whoever reads it may change the objects it holds.
    if (primed) return primed.tuple && deepCopy(primed.tuple);
    for (const layout of [keys, LEGACY]) {
      const range = id
        ? { from: layout.checkpoint(ns, id), to: `${layout.checkpoint(ns, id)}#${HIGH}` }
        : { prefix: layout.namespacePrefix(ns) };
      const tuple = await this.firstTuple(threadId, range, id ? LIST_PAGE : LATEST_PAGE, Boolean(id));
      if (tuple) return tuple;
    }
    return undefined;
  }

  /**
   * The latest checkpoint of the thread's root namespace, and, in the same Query, the items that
   * sort above it up to `upTo` inclusive: records other stores keep in the thread's partition
   * beside it (keys.ts), such as a session's owner record. The checkpoint is decoded only when
   * `accept` accepts those records (the caller owns the thread). A thread with no checkpoint in
   * the current layout is looked for in the legacy one (one Query more) unless `legacy` says,
   * from those records, that it began after the layout changed.
   */
  async latestWith(
    threadId: string,
    upTo: string,
    {
      accept = () => true,
      legacy = () => true,
    }: { accept?: (above: StoredItem[]) => boolean; legacy?: (above: StoredItem[]) => boolean } = {},
  ): Promise<{ tuple?: CheckpointTuple; above: StoredItem[] }> {
    const above: StoredItem[] = [];
    const range = { from: keys.namespacePrefix(""), to: upTo };
    let tuple: CheckpointTuple | undefined;
    let accepted: boolean | undefined;
    for await (const raw of this.checkpointsDescending(threadId, range, LATEST_PAGE + 1, above)) {
      accepted ??= accept(above);
      if (!accepted) return { above };
      tuple = await this.hydrate(threadId, raw);
      // An incomplete checkpoint is one whose put never finished: its parent is the latest state.
      if (tuple) return { tuple, above };
    }
    if (!(accepted ?? accept(above)) || !legacy(above)) return { above };
    tuple = await this.firstTuple(threadId, { prefix: LEGACY.namespacePrefix("") }, LATEST_PAGE, false);
    return { ...(tuple ? { tuple } : {}), above };
  }

  /**
   * Has reads of the thread's latest root checkpoint (getTuple with no id) answered with `tuple`,
   * read by latestWith, instead of a Query: for a caller that holds the thread's lease and read it
   * under that lease's guard, so nobody else can write the thread meanwhile (a turn's checks and
   * its graph then read it once between them). Undone by `unprime` (the caller lets its lease go)
   * and by any write this saver makes to the thread.
   */
  prime(threadId: string, tuple: CheckpointTuple | undefined): void {
    this.primed.set(threadId, { tuple });
  }

  unprime(threadId: string): void {
    this.primed.delete(threadId);
  }

  /** The first complete checkpoint in `range`, newest first (all of them must be, for a named one). */
  private async firstTuple(
    threadId: string,
    range: { prefix: string } | { from: string; to: string },
    firstPage: number,
    named: boolean,
  ): Promise<CheckpointTuple | undefined> {
    for await (const raw of this.checkpointsDescending(threadId, range, firstPage)) {
      const tuple = await this.hydrate(threadId, raw);
      // An incomplete checkpoint is one whose put never finished: the step that wrote it
      // was not acknowledged, so its parent is the thread's real latest state.
      if (tuple !== undefined || named) return tuple;
    }
    return undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const threads = threadId !== undefined ? [threadId] : await this.threadIds();
    // The current layout's checkpoints first: they were all written after the legacy ones.
    const ranges = [keys, LEGACY].map((layout) => ({
      prefix: ns === undefined ? layout.allCheckpointsPrefix() : layout.namespacePrefix(ns),
    }));
    for (const thread of threads) {
      for await (const raw of this.bothLayouts(thread, ranges, LIST_PAGE)) {
        if (remaining !== undefined && remaining <= 0) return;
        if (onlyId !== undefined && raw.id !== onlyId) continue;
        if (beforeId !== undefined && raw.id >= beforeId) continue;
        const doc = await this.readDoc(thread, raw.item);
        if (doc === undefined) continue;
        if (filter !== undefined) {
          const metadata = (await fromInline(this.serde, doc.m)) as Record<string, unknown>;
          if (!Object.entries(filter).every(([k, v]) => isDeepStrictEqual(metadata[k], v))) continue;
        }
        const tuple = await this.hydrate(thread, raw, doc);
        if (tuple === undefined) continue;
        if (remaining !== undefined) remaining -= 1;
        yield tuple;
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) {
      throw new Error('Failed to put checkpoint: config.configurable is missing "thread_id".');
    }
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    this.unprime(threadId);
    const now = nowSeconds();
    const parent = parentId ? await this.descriptorsOf(threadId, ns, parentId) : undefined;
    const channels = await encodeChannels(checkpoint, newVersions, {
      serde: this.serde,
      ns,
      now,
      refreshAfter: this.ttlSeconds === undefined ? undefined : this.ttlSeconds / 2,
      parent: parent?.descriptors,
      parentChains: parent?.chains,
      parentElements: parent?.elements,
    });
    const { channel_values: _values, ...skeleton } = checkpoint;
    const doc: CheckpointDoc = {
      ...(parentId ? { p: parentId } : {}),
      c: await toInline(this.serde, skeleton),
      // The run's own metadata goes with each of its checkpoints (as LangGraph's server's saver
      // keeps it): a thread's history can be filtered by the run that wrote it.
      m: await toInline(this.serde, { ...runMetadata(config), ...metadata }),
      ch: channels.descriptors,
    };
    const packed = packPayload(Buffer.from(JSON.stringify(doc), "utf8"));
    const shared = this.expiry(now, 1.5);
    const dependencies: Record<string, unknown>[] = [
      ...channels.logEntries.map((e) => ({ pk: threadId, ...e, ...shared })),
      ...[...channels.parts, ...packed.parts].map((p) => ({ pk: threadId, ...p, ...shared })),
    ];
    const item = { pk: threadId, sk: keys.checkpoint(ns, checkpoint.id), ...packed.attrs, ...this.expiry(now) };
    if (dependencies.length < ONE_BATCH) {
      await this.write([...dependencies, item]);
    } else {
      // Too big for one batch: make everything it points to durable first, so a crash
      // in between leaves unreferenced pieces rather than a checkpoint with holes.
      await this.write(dependencies);
      await this.write([item]);
    }
    // The cache keeps copies: the graph still holds the objects it handed to put.
    channels.logEntries.forEach((entry, i) => {
      const { value, rawBytes } = channels.logValues[i]!;
      this.entries.keep(threadId, entry, { value: deepCopy(value), rawBytes });
    });
    this.remember(threadId, ns, checkpoint.id, {
      descriptors: channels.descriptors,
      chains: channels.chains,
      elements: channels.elements,
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (threadId === undefined) throw new Error('Failed to put writes: config.configurable is missing "thread_id".');
    if (checkpointId === undefined) {
      throw new Error('Failed to put writes: config.configurable is missing "checkpoint_id".');
    }
    this.unprime(threadId);
    // Beside their checkpoint: one read in the legacy layout keeps its writes there.
    const layout = this.cache.get(cacheKey(threadId, ns, checkpointId))?.legacy ? LEGACY : keys;
    const now = nowSeconds();
    const items = new Map<string, Record<string, unknown>>();
    const parts: Record<string, unknown>[] = [];
    for (const [idx, [channel, value]] of writes.entries()) {
      const [type, bytes] = await this.serde.dumpsTyped(value);
      const packed = packPayload(bytes);
      parts.push(...packed.parts.map((p) => ({ pk: threadId, ...p, ...this.expiry(now, 1.5) })));
      // Keyed by (task, idx): a retried putWrites overwrites its own items instead of adding copies.
      const sk = layout.write(ns, checkpointId, taskId, WRITES_IDX_MAP[channel] || idx);
      items.set(sk, {
        pk: threadId,
        sk,
        ch: channel,
        ...(taskPath ? { tp: taskPath } : {}),
        ...(type !== "json" ? { t: type } : {}),
        ...packed.attrs,
        ...this.expiry(now),
      });
    }
    if (parts.length > 0) await this.write(parts);
    await this.write([...items.values()]);
  }

  /** Everything in the thread's partition, but the items `keep` names by sort key (none by default). */
  async deleteThread(threadId: string, keep: (sk: string) => boolean = () => false): Promise<void> {
    this.unprime(threadId);
    const deletes: WriteRequest[] = [];
    for await (const item of this.query({
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": threadId },
      ProjectionExpression: "pk, sk",
    })) {
      if (!keep(item.sk as string)) deletes.push({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } });
    }
    await batchWriteAll(this.doc, this.tableName, deletes, this.retry);
    for (const key of this.cache.keys()) if (key.startsWith(`${threadId}\u0000`)) this.cache.delete(key);
    this.entries.dropThread(threadId);
  }

  /**
   * Removes the thread's newest checkpoints written at or after `since` (their `ts`), with their
   * pending writes: the Agent Server API's "rollback" of a run that was stopped. Checkpoint ids are
   * time-ordered, so the walk stops at the first older one. The messages they pointed to stay
   * (content-addressed, shared with any other branch, and gone with the TTL or deleteThread).
   * Returns how many checkpoints were removed.
   */
  async deleteCheckpointsSince(threadId: string, since: Date, ns = ""): Promise<number> {
    const deletes: WriteRequest[] = [];
    const removed: string[] = [];
    this.unprime(threadId);
    const ranges = [keys, LEGACY].map((layout) => ({ prefix: layout.namespacePrefix(ns) }));
    for await (const raw of this.bothLayouts(threadId, ranges, LATEST_PAGE)) {
      const doc = await this.readDoc(threadId, raw.item);
      const ts = doc && ((await fromInline(this.serde, doc.c)) as { ts?: string }).ts;
      if (ts !== undefined && Date.parse(ts) < since.getTime()) break;
      removed.push(raw.id);
      for (const item of [raw.item, ...raw.writes])
        deletes.push({ DeleteRequest: { Key: { pk: threadId, sk: item.sk } } });
    }
    await batchWriteAll(this.doc, this.tableName, deletes, this.retry);
    for (const id of removed) this.cache.delete(cacheKey(threadId, ns, id));
    return removed.length;
  }

  // ---- reading -------------------------------------------------------------------

  /**
   * Checkpoints of one thread, newest first, each with its writes. Writes sort right
   * after their checkpoint, so in a descending Query they arrive just before it.
   */
  private async *checkpointsDescending(
    threadId: string,
    range: { prefix: string } | { from: string; to: string },
    firstPage: number,
    others?: StoredItem[],
  ): AsyncGenerator<RawCheckpoint> {
    const condition =
      "prefix" in range
        ? {
            KeyConditionExpression: "pk = :pk AND begins_with(sk, :a)",
            ExpressionAttributeValues: { ":pk": threadId, ":a": range.prefix },
          }
        : {
            KeyConditionExpression: "pk = :pk AND sk BETWEEN :a AND :b",
            ExpressionAttributeValues: { ":pk": threadId, ":a": range.from, ":b": range.to },
          };
    let pending: { ns: string; id: string; writes: StoredItem[] } | undefined;
    for await (const item of this.query({ ...condition, ScanIndexForward: false }, firstPage)) {
      const key = parseSortKey(item.sk);
      if (key.kind === "write") {
        if (pending?.ns !== key.ns || pending.id !== key.checkpointId) {
          pending = { ns: key.ns, id: key.checkpointId, writes: [] };
        }
        pending.writes.push(item);
      } else if (key.kind === "checkpoint") {
        const writes = pending?.ns === key.ns && pending.id === key.checkpointId ? pending.writes : [];
        pending = undefined;
        yield { ns: key.ns, id: key.checkpointId, item, writes, legacy: item.sk.startsWith("c#") };
      } else {
        others?.push(item);
      }
    }
  }

  /** Checkpoints in the current layout's range, then those in the legacy one's not seen already. */
  private async *bothLayouts(
    threadId: string,
    ranges: { prefix: string }[],
    firstPage: number,
  ): AsyncGenerator<RawCheckpoint> {
    const seen = new Set<string>();
    for (const range of ranges)
      for await (const raw of this.checkpointsDescending(threadId, range, firstPage)) {
        const id = `${raw.ns}\u0000${raw.id}`;
        if (seen.has(id)) continue;
        seen.add(id);
        yield raw;
      }
  }

  /** Paginated Query; pages start small and grow, so "latest" reads little. */
  private async *query(input: Omit<QueryCommandInput, "TableName">, firstPage?: number): AsyncGenerator<StoredItem> {
    let start: Record<string, unknown> | undefined;
    let limit = firstPage;
    do {
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          ConsistentRead: true,
          ...input,
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) yield item as StoredItem;
      start = out.LastEvaluatedKey;
      if (limit !== undefined) limit = Math.min(limit * 4, 1000);
    } while (start !== undefined);
  }

  private async threadIds(): Promise<string[]> {
    // Listing across threads has no key to query by; it is an operator's tool, so a
    // keys-only Scan is acceptable here rather than paying for an index on every write.
    const seen = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          ProjectionExpression: "pk",
          FilterExpression: "begins_with(sk, :c) OR begins_with(sk, :l)",
          ExpressionAttributeValues: { ":c": keys.allCheckpointsPrefix(), ":l": LEGACY.allCheckpointsPrefix() },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) seen.add(item.pk as string);
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    return [...seen];
  }

  private async readDoc(threadId: string, item: StoredItem): Promise<CheckpointDoc | undefined> {
    const parts = partKeys(item).length > 0 ? await this.parts(threadId, partKeys(item)) : new Map();
    const bytes = unpackPayload(item, parts);
    if (bytes === undefined) return undefined;
    return JSON.parse(Buffer.from(bytes).toString("utf8")) as CheckpointDoc;
  }

  private async hydrate(
    threadId: string,
    raw: RawCheckpoint,
    known?: CheckpointDoc,
  ): Promise<CheckpointTuple | undefined> {
    try {
      const doc = known ?? (await this.readDoc(threadId, raw.item));
      if (doc === undefined) throw new MissingPieceError("checkpoint payload");
      const chains: Chains = {};
      const elements: Record<string, unknown[]> = {};
      const [skeleton, metadata, channelValues, pendingWrites] = await Promise.all([
        fromInline(this.serde, doc.c) as Promise<Omit<Checkpoint, "channel_values">>,
        fromInline(this.serde, doc.m) as Promise<CheckpointMetadata>,
        decodeChannels(doc.ch, this.serde, this.valueSource(threadId, raw.ns), chains, elements),
        this.decodeWrites(threadId, raw.writes),
      ]);
      const checkpoint = { ...skeleton, channel_values: channelValues } as Checkpoint;
      if (checkpoint.v < 4 && doc.p !== undefined) await this.migratePendingSends(threadId, raw.ns, doc.p, checkpoint);
      this.remember(threadId, raw.ns, raw.id, {
        descriptors: doc.ch,
        chains,
        elements,
        ...(raw.legacy ? { legacy: true } : {}),
      });
      const tuple: CheckpointTuple = {
        config: { configurable: { thread_id: threadId, checkpoint_ns: raw.ns, checkpoint_id: raw.id } },
        checkpoint,
        metadata,
        pendingWrites,
      };
      if (doc.p !== undefined) {
        tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: raw.ns, checkpoint_id: doc.p } };
      }
      return tuple;
    } catch (err) {
      if (!(err instanceof MissingPieceError)) throw err;
      this.warn(`checkpoint ${threadId}/${raw.ns}/${raw.id} is incomplete (${err.message} missing); skipped`);
      return undefined;
    }
  }

  private valueSource(threadId: string, ns: string): ValueSource {
    return {
      cachedChain: (channel, head) => {
        const ordered: LogEntry[] = new Array(head.n);
        let hash: string | undefined = head.h;
        for (let i = head.n - 1; i >= 0; i--) {
          if (hash === undefined) return undefined;
          const entry = this.entries.entry(threadId, keys.logEntry(ns, channel, (head.o ?? 0) + i, hash));
          if (!entry) return undefined;
          ordered[i] = entry;
          hash = entry.pv;
        }
        return ordered;
      },
      logEntries: async (channel, from, length) => {
        const entries: LogEntry[] = [];
        // Only the live window's positions: entries of a dropped prefix are never read.
        for await (const item of this.query({
          KeyConditionExpression: "pk = :pk AND sk BETWEEN :a AND :b",
          ExpressionAttributeValues: {
            ":pk": threadId,
            ":a": keys.logLowerBound(ns, channel, from),
            ":b": keys.logUpperBound(ns, channel, from + length),
          },
        })) {
          entries.push(item as unknown as LogEntry);
        }
        for (const entry of entries) this.entries.keep(threadId, entry);
        return entries;
      },
      cachedValue: (entry) => this.entries.value(threadId, entry.sk),
      keepValue: (entry, value, rawBytes) => {
        this.entries.keep(threadId, entry, { value, rawBytes });
        return deepCopy(value);
      },
      parts: (sortKeys) => this.parts(threadId, sortKeys),
    };
  }

  private async parts(threadId: string, sortKeys: string[]): Promise<Map<string, Uint8Array>> {
    const unique = [...new Set(sortKeys)];
    const items = await batchGetAll(
      this.doc,
      this.tableName,
      unique.map((sk) => ({ pk: threadId, sk })),
      this.retry,
    );
    return new Map(items.map((i) => [i.sk as string, i.d as Uint8Array]));
  }

  private async decodeWrites(threadId: string, items: StoredItem[]): Promise<CheckpointPendingWrite[]> {
    const spilled = items.flatMap((i) => partKeys(i));
    const parts = spilled.length > 0 ? await this.parts(threadId, spilled) : new Map<string, Uint8Array>();
    const decoded = await Promise.all(
      items.map(async (item) => {
        const key = parseSortKey(item.sk);
        if (key.kind !== "write") throw new Error(`not a write item: ${item.sk}`);
        const bytes = unpackPayload(item, parts);
        if (bytes === undefined) throw new MissingPieceError(`write ${key.taskId}/${key.idx}`);
        const value = await this.serde.loadsTyped((item.t as string | undefined) ?? "json", bytes);
        return {
          sortKey: writesSortKey((item.tp as string | undefined) ?? "", key.taskId, key.idx),
          write: [key.taskId, item.ch as string, value] as CheckpointPendingWrite,
        };
      }),
    );
    decoded.sort((a, b) => compareWritesSortKeys(a.sortKey, b.sortKey));
    return decoded.map((d) => d.write);
  }

  /** Checkpoints before format v4 kept pending sends as the parent's TASKS writes. */
  private async migratePendingSends(threadId: string, ns: string, parentId: string, checkpoint: Checkpoint) {
    const items: StoredItem[] = [];
    // Beside the parent, in whichever layout it was written.
    for (const layout of [keys, LEGACY]) {
      for await (const item of this.query({
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :a AND :b",
        ExpressionAttributeValues: {
          ":pk": threadId,
          ":a": `${layout.checkpoint(ns, parentId)}#w#`,
          ":b": `${layout.checkpoint(ns, parentId)}#w#${HIGH}`,
        },
      })) {
        items.push(item);
      }
      if (items.length > 0) break;
    }
    const writes = await this.decodeWrites(threadId, items);
    checkpoint.channel_values[TASKS] = writes.filter(([, channel]) => channel === TASKS).map(([, , value]) => value);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  // ---- writing -------------------------------------------------------------------

  private write(items: Record<string, unknown>[]): Promise<void> {
    return this.writes.put(items);
  }

  private expiry(now: number, factor = 1): Record<string, number> {
    if (this.ttlSeconds === undefined) return {};
    return { [CHECKPOINT_TABLE.ttlAttribute]: now + Math.ceil(this.ttlSeconds * factor) };
  }

  /**
   * The parent's channel descriptors: remembered from this process (with its log chains),
   * else one consistent GetItem (without them: a dropped prefix is then written afresh).
   */
  private async descriptorsOf(threadId: string, ns: string, id: string): Promise<Remembered | undefined> {
    const cached = this.cache.get(cacheKey(threadId, ns, id));
    if (cached !== undefined) return cached;
    for (const layout of [keys, LEGACY]) {
      const out = await this.doc.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { pk: threadId, sk: layout.checkpoint(ns, id) },
          ConsistentRead: true,
        }),
      );
      if (out.Item === undefined) continue;
      const descriptors = (await this.readDoc(threadId, out.Item as StoredItem))?.ch;
      return descriptors && { descriptors };
    }
    return undefined;
  }

  private remember(threadId: string, ns: string, id: string, remembered: Remembered): void {
    const key = cacheKey(threadId, ns, id);
    this.cache.delete(key);
    this.cache.set(key, remembered);
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }
}

/** What the saver keeps in memory about a checkpoint it read or wrote. */
interface Remembered {
  descriptors: Descriptors;
  chains?: Chains;
  /** the log channels' element objects: a put whose value starts with them appends to the parent */
  elements?: Elements;
  /** read from the legacy layout (keys.ts LEGACY): its pending writes are kept beside it there */
  legacy?: boolean;
}

const cacheKey = (threadId: string, ns: string, id: string) => `${threadId}\u0000${ns}\u0000${id}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A run's metadata (the config's), without LangChain's tracing additions: JSON values only. */
function runMetadata(config: RunnableConfig): Record<string, unknown> {
  const metadata = (config.metadata ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(metadata).filter(([k]) => !k.startsWith("__") && !k.startsWith("ls_")));
}
