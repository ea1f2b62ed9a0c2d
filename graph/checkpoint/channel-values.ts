import type { ChannelVersions, Checkpoint, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { fromInline, inlineBytes, type Inline } from "./inline";
import { keys, parseSortKey } from "./keys";
import { contentHash, packPayload, partKeys, unpackPayload, type PartItem, type PayloadAttrs } from "./payload";

/**
 * How one channel's value at one version is stored. A checkpoint carries one
 * descriptor per channel it has a value for; a channel that did not change is
 * carried over from the parent's descriptor without rewriting its value.
 *
 * - inline: small values live in the checkpoint item itself.
 * - blob:   larger single values are written once, content-addressed, as part items.
 * - log:    array values (the messages channel above all) are stored element by
 *           element under a hash chain. A checkpoint only names the chain's length
 *           and head, so appending two messages writes two entries, not the list.
 *           Positions are absolute: `o` is the position of the first live element
 *           and `s` the chain hash before it. Dropping a prefix (a conversation
 *           trimmed to its working window) only moves `o` forward: the remaining
 *           entries keep their keys, nothing is rewritten, and a read covers the
 *           positions o..o+n-1 only.
 *
 * `w` (epoch seconds) is when the oldest stored piece was written; with a TTL,
 * pieces older than half the TTL are rewritten so a live checkpoint never
 * outlives what it points to.
 */
export type Descriptor =
  | ({ v: number | string } & Inline)
  | { v: number | string; t: string; b: PayloadAttrs; w: number }
  | { v: number | string; l: LogHead; w: number };

/** A log channel's live window: n elements at positions o..o+n-1, ending in chain hash h. */
export interface LogHead {
  n: number;
  h: string;
  /** absolute position of the first live element; 0 when absent */
  o?: number;
  /** chain hash before position o ("" when absent) */
  s?: string;
}

/**
 * Chain hashes of a checkpoint's live log elements, by channel (index i is position o+i).
 * Kept in memory by the saver for checkpoints it has just read or written: with them a
 * put can recognise a dropped prefix without reading anything.
 */
export type Chains = Record<string, string[]>;

export type Descriptors = Record<string, Descriptor>;

/** Values whose serialized form is at most this size stay inline in the checkpoint item. */
export const INLINE_VALUE_MAX = 2048;

/** A stored element of an append-only channel. */
export interface LogEntry extends PayloadAttrs {
  sk: string;
  /** previous chain hash; absent at position 0 */
  pv?: string;
  /** serde type, when not "json" */
  t?: string;
}

export interface EncodeContext {
  serde: SerializerProtocol;
  ns: string;
  now: number;
  /** seconds after which a shared piece is rewritten; undefined when there is no TTL */
  refreshAfter?: number;
  /** descriptors of the parent checkpoint, when known */
  parent?: Descriptors;
  /** chain hashes of the parent's log channels, when this process has them */
  parentChains?: Chains;
  /** the element objects of the parent's log channels as this process last saw them */
  parentElements?: Elements;
}

/**
 * A log channel's element objects, by channel, as handed to `put` or returned by a read.
 * LangGraph's reducers build the next state from the same objects (state is never changed in
 * place), so elements identical to the parent's are known to be stored already.
 */
export type Elements = Record<string, readonly unknown[]>;

export interface EncodedChannels {
  descriptors: Descriptors;
  logEntries: LogEntry[];
  parts: PartItem[];
  /** chain hashes of this checkpoint's log channels, for the saver's cache */
  chains: Chains;
  /** this checkpoint's log channels' element objects, for the saver's cache */
  elements: Elements;
  /** the value of each new log entry (same order as logEntries) and its serialized size */
  logValues: { value: unknown; rawBytes: number }[];
}

const isFresh = (w: number, ctx: EncodeContext) => ctx.refreshAfter === undefined || ctx.now - w < ctx.refreshAfter;

export async function encodeChannels(
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
  ctx: EncodeContext,
): Promise<EncodedChannels> {
  const out: EncodedChannels = { descriptors: {}, logEntries: [], parts: [], chains: {}, elements: {}, logValues: [] };
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    const value = (checkpoint.channel_values as Record<string, unknown>)[channel];
    const inherited = ctx.parent?.[channel];
    const changed = channel in newVersions;
    if (!changed) {
      // Unchanged channel: reuse the parent's stored value when it is the same version.
      if (inherited === undefined || inherited.v !== version) continue;
      if (!("w" in inherited) || isFresh(inherited.w, ctx)) {
        out.descriptors[channel] = inherited;
        const chain = ctx.parentChains?.[channel];
        if ("l" in inherited && chain !== undefined) out.chains[channel] = chain;
        const elements = ctx.parentElements?.[channel];
        if ("l" in inherited && elements !== undefined) out.elements[channel] = elements;
        continue;
      }
      // Stale under the TTL: fall through and store it again from the value we were handed.
    }
    if (value === undefined) continue;
    out.descriptors[channel] = await encodeValue(channel, version, value, inherited, ctx, out);
  }
  return out;
}

async function encodeValue(
  channel: string,
  version: number | string,
  value: unknown,
  inherited: Descriptor | undefined,
  ctx: EncodeContext,
  out: EncodedChannels,
): Promise<Descriptor> {
  if (Array.isArray(value) && value.length > 0 && !value.includes(undefined)) {
    const appended = appendedTo(channel, value, inherited, ctx);
    if (appended !== undefined) return appendLog(channel, version, value, appended, ctx, out);
    const elements = await Promise.all(value.map((e) => ctx.serde.dumpsTyped(e)));
    const size = elements.reduce((n, [, bytes]) => n + bytes.byteLength, 0);
    if (size > INLINE_VALUE_MAX) return encodeLog(channel, version, value, elements, inherited, ctx, out);
  }
  const [type, bytes] = await ctx.serde.dumpsTyped(value);
  if (bytes.byteLength <= INLINE_VALUE_MAX) {
    return { v: version, ...inlineBytes(type, bytes) };
  }
  const packed = packPayload(bytes, true);
  const reused =
    inherited !== undefined && "b" in inherited && inherited.b.bx === packed.attrs.bx && isFresh(inherited.w, ctx);
  if (!reused) out.parts.push(...packed.parts);
  return { v: version, t: type, b: packed.attrs, w: reused ? inherited.w : ctx.now };
}

const link = (prev: string, [type, bytes]: [string, Uint8Array]) => contentHash(prev, "\u0000", type, "\u0000", bytes);

/** The parent's log value, when `value` is it with elements appended (the same objects, in place). */
function appendedTo(
  channel: string,
  value: readonly unknown[],
  inherited: Descriptor | undefined,
  ctx: EncodeContext,
): { head: LogHead; chain: string[]; w: number } | undefined {
  if (inherited === undefined || !("l" in inherited) || !isFresh(inherited.w, ctx)) return undefined;
  const chain = ctx.parentChains?.[channel];
  const elements = ctx.parentElements?.[channel];
  const n = inherited.l.n;
  if (chain?.length !== n || elements?.length !== n || value.length < n) return undefined;
  for (let i = 0; i < n; i++) if (value[i] !== elements[i]) return undefined;
  return { head: inherited.l, chain, w: inherited.w };
}

/** Stores only the elements after the parent's head: nothing before it is serialized or hashed again. */
async function appendLog(
  channel: string,
  version: number | string,
  value: readonly unknown[],
  parent: { head: LogHead; chain: string[]; w: number },
  ctx: EncodeContext,
  out: EncodedChannels,
): Promise<Descriptor> {
  const n = parent.head.n;
  const added = await Promise.all(value.slice(n).map((e) => ctx.serde.dumpsTyped(e)));
  const chain = [...parent.chain];
  for (const e of added) chain.push(link(chain[chain.length - 1]!, e));
  const base = parent.head.o ?? 0;
  const seed = parent.head.s ?? "";
  storeEntries(channel, value, added, n, { base, seed, chain }, ctx, out);
  return { v: version, l: logHead(chain, base, seed), w: parent.w };
}

function encodeLog(
  channel: string,
  version: number | string,
  value: readonly unknown[],
  elements: [string, Uint8Array][],
  inherited: Descriptor | undefined,
  ctx: EncodeContext,
  out: EncodedChannels,
): Descriptor {
  const parent = inherited !== undefined && "l" in inherited && isFresh(inherited.w, ctx) ? inherited : undefined;
  const placed = placeLog(elements, parent?.l, ctx.parentChains?.[channel]);
  storeEntries(channel, value, elements.slice(placed.reused), placed.reused, placed, ctx, out);
  return { v: version, l: logHead(placed.chain, placed.base, placed.seed), w: placed.reused > 0 ? parent!.w : ctx.now };
}

/** Log entries for `value`'s elements from position `from` on (`added` holds their serialized forms). */
function storeEntries(
  channel: string,
  value: readonly unknown[],
  added: [string, Uint8Array][],
  from: number,
  placed: { base: number; seed: string; chain: string[] },
  ctx: EncodeContext,
  out: EncodedChannels,
): void {
  const { base, seed, chain } = placed;
  added.forEach(([type, bytes], k) => {
    const i = from + k;
    const packed = packPayload(bytes);
    const pv = i > 0 ? chain[i - 1]! : seed;
    out.parts.push(...packed.parts);
    out.logEntries.push({
      sk: keys.logEntry(ctx.ns, channel, base + i, chain[i]!),
      ...(pv !== "" ? { pv } : {}),
      ...(type !== "json" ? { t: type } : {}),
      ...packed.attrs,
    });
    out.logValues.push({ value: value[i], rawBytes: bytes.byteLength });
  });
  out.chains[channel] = chain;
  out.elements[channel] = [...value];
}

function logHead(chain: string[], base: number, seed: string): LogHead {
  const l: LogHead = { n: chain.length, h: chain[chain.length - 1]! };
  if (base > 0) l.o = base;
  if (seed !== "") l.s = seed;
  return l;
}

/**
 * Where a new log value goes relative to its parent's, and how many of its leading
 * elements are already stored.
 *
 * - The parent's window extended (the usual append): same start, the parent's
 *   elements are reused. Recognised from the parent's head alone.
 * - The parent's window with its first k elements dropped, then extended: start
 *   moves to o+k and the surviving elements are reused. Recognised by the chain
 *   hashes of the parent's window (the saver's cache), without a read.
 * - Anything else (or a parent whose window this process has not seen): written
 *   whole at fresh positions after the parent's window, so later reads of this
 *   checkpoint never scan the parent's entries.
 */
function placeLog(
  elements: [string, Uint8Array][],
  parent: LogHead | undefined,
  parentChain: string[] | undefined,
): { base: number; seed: string; chain: string[]; reused: number } {
  const chainFrom = (seed: string) => {
    const chain: string[] = [];
    let prev = seed;
    for (const e of elements) chain.push((prev = link(prev, e)));
    return chain;
  };
  if (parent === undefined) return { base: 0, seed: "", chain: chainFrom(""), reused: 0 };
  const o = parent.o ?? 0;
  const s = parent.s ?? "";
  const known = parentChain !== undefined && parentChain.length === parent.n ? parentChain : undefined;
  // Drop of k leading elements: the new first element continues the parent's chain at o+k.
  for (let k = 0; k < (known ? parent.n : 1); k++) {
    const seed = k === 0 ? s : known![k - 1]!;
    const chain = chainFrom(seed);
    let reused = 0;
    if (known) {
      while (reused < chain.length && k + reused < parent.n && chain[reused] === known[k + reused]) reused++;
    } else if (chain.length >= parent.n && chain[parent.n - 1] === parent.h) {
      reused = parent.n;
    }
    if (reused > 0) return { base: o + k, seed, chain, reused };
  }
  return { base: o + parent.n, seed: parent.h, chain: chainFrom(parent.h), reused: 0 };
}

/** What decoding needs from storage. */
export interface ValueSource {
  /** every stored log entry of `channel` at positions from..from+length-1 */
  logEntries(channel: string, from: number, length: number): Promise<LogEntry[]>;
  /**
   * The entries of the chain ending at `head`, when this process already holds every one of them
   * (the saver's cache); undefined sends the read to `logEntries`.
   */
  cachedChain?(channel: string, head: LogHead): LogEntry[] | undefined;
  /** part items by sort key; missing ones are absent from the map */
  parts(sortKeys: string[]): Promise<Map<string, Uint8Array>>;
  /** a fresh copy of the entry's value when this process has decoded it before */
  cachedValue?(entry: LogEntry): { value: unknown } | undefined;
  /** hands a just-decoded value to the cache; returns what the read should return instead */
  keepValue?(entry: LogEntry, value: unknown, rawBytes: number): unknown;
}

/** Thrown inside decoding when a referenced piece is missing: the checkpoint is incomplete. */
export class MissingPieceError extends Error {}

/**
 * Decodes a checkpoint's channels; the chain hashes of its log channels are put in `chains`,
 * and the element objects returned for them in `elements`.
 */
export async function decodeChannels(
  descriptors: Descriptors,
  serde: SerializerProtocol,
  source: ValueSource,
  chains: Chains = {},
  elements: Record<string, unknown[]> = {},
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    Object.entries(descriptors).map(async ([channel, d]) => {
      const value = await decodeValue(channel, d, serde, source, chains);
      if ("l" in d) elements[channel] = [...(value as unknown[])];
      return [channel, value] as const;
    }),
  );
  return Object.fromEntries(entries);
}

async function decodeValue(
  channel: string,
  d: Descriptor,
  serde: SerializerProtocol,
  source: ValueSource,
  chains: Chains,
): Promise<unknown> {
  if ("j" in d || "s" in d) return fromInline(serde, d);
  if ("b" in d) {
    const bytes = unpackPayload(d.b, await source.parts(partKeys(d.b)));
    if (bytes === undefined) throw new MissingPieceError(`value of channel "${channel}"`);
    return serde.loadsTyped(d.t, bytes);
  }
  const from = d.l.o ?? 0;
  const ordered =
    source.cachedChain?.(channel, d.l) ?? walkChain(channel, d.l, await source.logEntries(channel, from, d.l.n));
  chains[channel] = ordered.map((e) => (parseSortKey(e.sk) as { chain: string }).chain);
  const values: unknown[] = new Array(ordered.length);
  const toDecode: number[] = [];
  ordered.forEach((e, i) => {
    const hit = source.cachedValue?.(e);
    if (hit !== undefined) values[i] = hit.value;
    else toDecode.push(i);
  });
  const spilled = toDecode.flatMap((i) => partKeys(ordered[i]!));
  const parts = spilled.length > 0 ? await source.parts(spilled) : new Map<string, Uint8Array>();
  await Promise.all(
    toDecode.map(async (i) => {
      const e = ordered[i]!;
      const bytes = unpackPayload(e, parts);
      if (bytes === undefined) throw new MissingPieceError(`element of channel "${channel}"`);
      const value = await serde.loadsTyped(e.t ?? "json", bytes);
      values[i] = source.keepValue !== undefined ? source.keepValue(e, value, bytes.byteLength) : value;
    }),
  );
  return values;
}

/**
 * Picks the entries of one chain out of the stored ones. Usually there is one
 * entry per position; a forked thread (a run resumed from an older checkpoint)
 * leaves several, told apart by their chain hashes.
 */
function walkChain(channel: string, head: LogHead, stored: LogEntry[]): LogEntry[] {
  const byKey = new Map<string, LogEntry>();
  for (const e of stored) {
    const key = parseSortKey(e.sk);
    if (key.kind === "log") byKey.set(`${key.position}#${key.chain}`, e);
  }
  const ordered: LogEntry[] = new Array(head.n);
  const from = head.o ?? 0;
  let hash: string | undefined = head.h;
  for (let i = head.n - 1; i >= 0; i--) {
    const entry = byKey.get(`${from + i}#${hash}`);
    if (entry === undefined) throw new MissingPieceError(`entry ${from + i} of channel "${channel}"`);
    ordered[i] = entry;
    hash = entry.pv;
  }
  return ordered;
}
