import { createHash } from "node:crypto";
import { decodePayload, encodePayload } from "./codec";
import { keys } from "./keys";

/**
 * Stores one payload on an item, spilling into content-addressed part items when
 * it would not fit. DynamoDB caps an item at 400 KB (names and keys included);
 * splitting keeps big states inside the one table, so they are read with the same
 * consistent reads, expire with the same TTL and go with the same deleteThread.
 */
export const MAX_INLINE_BYTES = 350_000;

/** Attributes a payload-carrying item holds. */
export interface PayloadAttrs {
  /** codec of `d` or of the concatenated parts */
  cd: string;
  /** the (encoded) payload, when it fits */
  d?: Uint8Array;
  /** hash naming the part items, when it did not fit */
  bx?: string;
  /** number of part items */
  bn?: number;
}

export interface PartItem {
  sk: string;
  d: Uint8Array;
}

export interface Packed {
  attrs: PayloadAttrs;
  parts: PartItem[];
}

export function contentHash(...chunks: (Uint8Array | string)[]): string {
  const h = createHash("sha256");
  for (const c of chunks) h.update(c);
  return h.digest("base64url").slice(0, 22);
}

/** `spill` forces the part items even for a small payload (for values shared across checkpoints). */
export function packPayload(raw: Uint8Array, spill = false): Packed {
  const { codec, bytes } = encodePayload(raw);
  // DynamoDB accepts empty binary attributes, but an absent one says the same in fewer bytes.
  if (bytes.byteLength === 0) return { attrs: { cd: codec }, parts: [] };
  if (!spill && bytes.byteLength <= MAX_INLINE_BYTES) return { attrs: { cd: codec, d: bytes }, parts: [] };
  const hash = contentHash(bytes);
  const parts: PartItem[] = [];
  for (let i = 0, off = 0; off < bytes.byteLength; i++, off += MAX_INLINE_BYTES) {
    parts.push({ sk: keys.part(hash, i), d: bytes.subarray(off, off + MAX_INLINE_BYTES) });
  }
  return { attrs: { cd: codec, bx: hash, bn: parts.length }, parts };
}

/** Sort keys of the parts a payload needs, empty when it is inline. */
export function partKeys(attrs: PayloadAttrs): string[] {
  if (attrs.bx === undefined) return [];
  return Array.from({ length: attrs.bn ?? 0 }, (_, i) => keys.part(attrs.bx!, i));
}

/**
 * Rebuilds the payload; `parts` maps part sort keys to their bytes. Returns
 * undefined when a part is missing (a write that never completed).
 */
export function unpackPayload(attrs: PayloadAttrs, parts: ReadonlyMap<string, Uint8Array>): Uint8Array | undefined {
  if (attrs.bx === undefined) return decodePayload(attrs.cd, attrs.d ?? new Uint8Array());
  const pieces: Uint8Array[] = [];
  for (const sk of partKeys(attrs)) {
    const piece = parts.get(sk);
    if (piece === undefined) return undefined;
    pieces.push(piece);
  }
  return decodePayload(attrs.cd, Buffer.concat(pieces));
}
