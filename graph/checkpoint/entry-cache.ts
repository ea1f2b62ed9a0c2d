import { deepCopy } from "./deep-copy";
import type { LogEntry } from "./channel-values";

/** Estimated bytes of a decoded value per stored (uncompressed JSON) byte: objects, strings as UTF-16. */
const DECODED_PER_BYTE = 3;
/** Per-entry overhead of the map, the key and the entry object. */
const ENTRY_OVERHEAD = 200;

interface Cached {
  entry: LogEntry;
  /** the decoded value, never handed out: reads get a deep copy */
  value?: unknown;
  weight: number;
}

/**
 * Log entries this process wrote or read, with their decoded values, so a warm container
 * neither reads back nor re-decodes the history it just wrote. An entry's sort key names its
 * position and chain hash, so a cached entry can never be stale.
 *
 * Reads hand out deep copies (which keep the message classes' prototypes; copying is
 * several times cheaper than parsing and reviving), so a caller mutating a returned message
 * cannot change what the next read returns. Bounded by estimated bytes, not by count: one
 * large tool result must not be able to push a container out of memory. Least recently
 * used go first.
 */
export class EntryCache {
  private readonly items = new Map<string, Cached>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  /**
   * Remembers an entry. `value`, its decoded value, is taken over by the cache: the caller must
   * not hand the same object out (pass a copy of anything still in use elsewhere).
   * `rawBytes` is the value's serialized size, for the memory estimate.
   */
  keep(threadId: string, entry: LogEntry, decoded?: { value: unknown; rawBytes: number }): void {
    const key = cacheKey(threadId, entry.sk);
    entry = compact(entry);
    const old = this.items.get(key);
    if (old !== undefined) {
      this.items.delete(key);
      this.bytes -= old.weight;
    }
    const value = decoded !== undefined ? decoded.value : old?.value;
    const weight =
      decoded !== undefined
        ? ENTRY_OVERHEAD + decoded.rawBytes * DECODED_PER_BYTE
        : (old?.weight ?? ENTRY_OVERHEAD + (entry.d?.byteLength ?? 0));
    this.items.set(key, { entry, value, weight });
    this.bytes += weight;
    while (this.bytes > this.budget && this.items.size > 1) {
      const [oldest, dropped] = this.items.entries().next().value!;
      this.items.delete(oldest);
      this.bytes -= dropped.weight;
    }
  }

  entry(threadId: string, sk: string): LogEntry | undefined {
    return this.items.get(cacheKey(threadId, sk))?.entry;
  }

  /** A fresh copy of the entry's decoded value, or undefined when it has not been decoded here. */
  value(threadId: string, sk: string): { value: unknown } | undefined {
    const cached = this.items.get(cacheKey(threadId, sk));
    return cached?.value === undefined ? undefined : { value: deepCopy(cached.value) };
  }

  dropThread(threadId: string): void {
    const prefix = cacheKey(threadId, "");
    for (const [key, cached] of this.items) {
      if (!key.startsWith(prefix)) continue;
      this.items.delete(key);
      this.bytes -= cached.weight;
    }
  }

  get size(): number {
    return this.items.size;
  }
}

const cacheKey = (threadId: string, sk: string) => `${threadId}\u0000${sk}`;

/**
 * The entry with its payload in a buffer of its own. A few hundred bytes decoded from base64 by
 * the SDK sit in Node's shared 8 KB buffer pool, and Brotli's output is a view on its 16 KB
 * chunk: kept as they are, each cached entry would hold on to the whole block (the soak bench's
 * array buffers grew by 15 MB per 1,000 turns until this copy).
 */
function compact(entry: LogEntry): LogEntry {
  const d = entry.d;
  if (d === undefined || d.buffer.byteLength <= d.byteLength + 64) return entry;
  return { ...entry, d: d.slice() };
}
