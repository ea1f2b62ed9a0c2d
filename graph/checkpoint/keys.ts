/**
 * Sort-key layout. One partition per thread (pk = thread_id) holds everything
 * the thread owns, so a thread is read with Query and deleted with one sweep.
 *
 *   c#<ns>#<checkpoint_id>                       checkpoint
 *   c#<ns>#<checkpoint_id>#w#<task_id>#<idx>     pending write of that checkpoint
 *   l#<ns>#<channel>#<position>#<chain_hash>     one element of an append-only channel
 *   x#<content_hash>#<part>                      part of a payload too big for its item
 *
 * A checkpoint's writes sort right after it, so one descending Query returns a
 * checkpoint together with its writes (getTuple in one round trip).
 *
 * Components are escaped so they only contain characters that sort above '#':
 * a separator then always sorts before any component character, and an id that
 * is a prefix of another cannot interleave with it.
 */

const SAFE = /[^A-Za-z0-9._-]/g;

export function escapeComponent(value: string): string {
  return value.replace(SAFE, (ch) =>
    Array.from(new TextEncoder().encode(ch), (b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
  );
}

export function unescapeComponent(value: string): string {
  return decodeURIComponent(value);
}

/** Above every escaped component character, used as an upper bound in BETWEEN. */
export const HIGH = "~";

const POSITION_WIDTH = 9;

export const keys = {
  namespacePrefix: (ns: string) => `c#${escapeComponent(ns)}#`,
  allCheckpointsPrefix: () => "c#",
  checkpoint: (ns: string, id: string) => `c#${escapeComponent(ns)}#${escapeComponent(id)}`,
  write: (ns: string, id: string, taskId: string, idx: number) =>
    `c#${escapeComponent(ns)}#${escapeComponent(id)}#w#${escapeComponent(taskId)}#${idx}`,
  logEntry: (ns: string, channel: string, position: number, chain: string) =>
    `${logPrefix(ns, channel)}${String(position).padStart(POSITION_WIDTH, "0")}#${chain}`,
  logPrefix,
  /** Lower bound (inclusive) for the entries at positions >= `from`. */
  logLowerBound: (ns: string, channel: string, from: number) =>
    `${logPrefix(ns, channel)}${String(from).padStart(POSITION_WIDTH, "0")}#`,
  /** Upper bound (inclusive) for the entries at positions < `end`. */
  logUpperBound: (ns: string, channel: string, end: number) =>
    `${logPrefix(ns, channel)}${String(end - 1).padStart(POSITION_WIDTH, "0")}#${HIGH}`,
  part: (hash: string, index: number) => `x#${hash}#${index}`,
};

function logPrefix(ns: string, channel: string): string {
  return `l#${escapeComponent(ns)}#${escapeComponent(channel)}#`;
}

export type ParsedKey =
  | { kind: "checkpoint"; ns: string; checkpointId: string }
  | { kind: "write"; ns: string; checkpointId: string; taskId: string; idx: number }
  | { kind: "log"; position: number; chain: string }
  | { kind: "other" };

export function parseSortKey(sk: string): ParsedKey {
  const parts = sk.split("#");
  if (parts[0] === "c" && parts.length === 3) {
    return { kind: "checkpoint", ns: unescapeComponent(parts[1]!), checkpointId: unescapeComponent(parts[2]!) };
  }
  if (parts[0] === "c" && parts.length === 6 && parts[3] === "w") {
    return {
      kind: "write",
      ns: unescapeComponent(parts[1]!),
      checkpointId: unescapeComponent(parts[2]!),
      taskId: unescapeComponent(parts[4]!),
      idx: Number(parts[5]),
    };
  }
  if (parts[0] === "l" && parts.length === 5) {
    return { kind: "log", position: Number(parts[3]), chain: parts[4]! };
  }
  return { kind: "other" };
}
