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
 *
 * `w` (epoch seconds) is when the oldest stored piece was written; with a TTL,
 * pieces older than half the TTL are rewritten so a live checkpoint never
 * outlives what it points to.
 */
export type Descriptor =
  | ({ v: number | string } & Inline)
  | { v: number | string; t: string; b: PayloadAttrs; w: number }
  | { v: number | string; l: { n: number; h: string }; w: number };

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
}

export interface EncodedChannels {
  descriptors: Descriptors;
  logEntries: LogEntry[];
  parts: PartItem[];
}

const isFresh = (w: number, ctx: EncodeContext) => ctx.refreshAfter === undefined || ctx.now - w < ctx.refreshAfter;

export async function encodeChannels(
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
  ctx: EncodeContext,
): Promise<EncodedChannels> {
  const out: EncodedChannels = { descriptors: {}, logEntries: [], parts: [] };
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    const value = (checkpoint.channel_values as Record<string, unknown>)[channel];
    const inherited = ctx.parent?.[channel];
    const changed = channel in newVersions;
    if (!changed) {
      // Unchanged channel: reuse the parent's stored value when it is the same version.
      if (inherited === undefined || inherited.v !== version) continue;
      if (!("w" in inherited) || isFresh(inherited.w, ctx)) {
        out.descriptors[channel] = inherited;
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
    const elements = await Promise.all(value.map((e) => ctx.serde.dumpsTyped(e)));
    const size = elements.reduce((n, [, bytes]) => n + bytes.byteLength, 0);
    if (size > INLINE_VALUE_MAX) return encodeLog(channel, version, elements, inherited, ctx, out);
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

function encodeLog(
  channel: string,
  version: number | string,
  elements: [string, Uint8Array][],
  inherited: Descriptor | undefined,
  ctx: EncodeContext,
  out: EncodedChannels,
): Descriptor {
  const chain: string[] = [];
  let prev = "";
  for (const [type, bytes] of elements) {
    prev = contentHash(prev, "\u0000", type, "\u0000", bytes);
    chain.push(prev);
  }
  // Entries up to the parent's head are already stored when our chain passes through it.
  let start = 0;
  let w = ctx.now;
  if (inherited !== undefined && "l" in inherited && isFresh(inherited.w, ctx)) {
    const { n, h } = inherited.l;
    if (n <= chain.length && chain[n - 1] === h) {
      start = n;
      w = inherited.w;
    }
  }
  for (let i = start; i < elements.length; i++) {
    const [type, bytes] = elements[i]!;
    const packed = packPayload(bytes);
    out.parts.push(...packed.parts);
    out.logEntries.push({
      sk: keys.logEntry(ctx.ns, channel, i, chain[i]!),
      ...(i > 0 ? { pv: chain[i - 1] } : {}),
      ...(type !== "json" ? { t: type } : {}),
      ...packed.attrs,
    });
  }
  return { v: version, l: { n: chain.length, h: chain[chain.length - 1]! }, w };
}

/** What decoding needs from storage. */
export interface ValueSource {
  /** every stored log entry of `channel` at positions below `length` */
  logEntries(channel: string, length: number): Promise<LogEntry[]>;
  /** part items by sort key; missing ones are absent from the map */
  parts(sortKeys: string[]): Promise<Map<string, Uint8Array>>;
}

/** Thrown inside decoding when a referenced piece is missing: the checkpoint is incomplete. */
export class MissingPieceError extends Error {}

export async function decodeChannels(
  descriptors: Descriptors,
  serde: SerializerProtocol,
  source: ValueSource,
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    Object.entries(descriptors).map(
      async ([channel, d]) => [channel, await decodeValue(channel, d, serde, source)] as const,
    ),
  );
  return Object.fromEntries(entries);
}

async function decodeValue(
  channel: string,
  d: Descriptor,
  serde: SerializerProtocol,
  source: ValueSource,
): Promise<unknown> {
  if ("j" in d || "s" in d) return fromInline(serde, d);
  if ("b" in d) {
    const bytes = unpackPayload(d.b, await source.parts(partKeys(d.b)));
    if (bytes === undefined) throw new MissingPieceError(`value of channel "${channel}"`);
    return serde.loadsTyped(d.t, bytes);
  }
  const ordered = walkChain(channel, d.l, await source.logEntries(channel, d.l.n));
  const spilled = ordered.flatMap((e) => partKeys(e));
  const parts = spilled.length > 0 ? await source.parts(spilled) : new Map<string, Uint8Array>();
  return Promise.all(
    ordered.map((e) => {
      const bytes = unpackPayload(e, parts);
      if (bytes === undefined) throw new MissingPieceError(`element of channel "${channel}"`);
      return serde.loadsTyped(e.t ?? "json", bytes);
    }),
  );
}

/**
 * Picks the entries of one chain out of the stored ones. Usually there is one
 * entry per position; a forked thread (a run resumed from an older checkpoint)
 * leaves several, told apart by their chain hashes.
 */
function walkChain(channel: string, head: { n: number; h: string }, stored: LogEntry[]): LogEntry[] {
  const byKey = new Map<string, LogEntry>();
  for (const e of stored) {
    const key = parseSortKey(e.sk);
    if (key.kind === "log") byKey.set(`${key.position}#${key.chain}`, e);
  }
  const ordered: LogEntry[] = new Array(head.n);
  let hash: string | undefined = head.h;
  for (let i = head.n - 1; i >= 0; i--) {
    const entry = byKey.get(`${i}#${hash}`);
    if (entry === undefined) throw new MissingPieceError(`entry ${i} of channel "${channel}"`);
    ordered[i] = entry;
    hash = entry.pv;
  }
  return ordered;
}
