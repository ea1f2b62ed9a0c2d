/**
 * Sort-key layout. One partition per thread (pk = thread_id) holds everything
 * the thread owns, so a thread is read with Query and deleted with one sweep.
 *
 *   s#<ns>#<checkpoint_id>                       checkpoint
 *   s#<ns>#<checkpoint_id>#w#<task_id>#<idx>     pending write of that checkpoint
 *   l#<ns>#<channel>#<position>#<chain_hash>     one element of an append-only channel
 *   x#<content_hash>#<part>                      part of a payload too big for its item
 *
 * A checkpoint's writes sort right after it, so one descending Query returns a
 * checkpoint together with its writes (getTuple in one round trip).
 *
 * The root namespace ("") is written `~`, above every escaped namespace, so the root's
 * checkpoints are the highest `s#` keys: nothing sorts between its newest checkpoint and
 * `session`, the owner record other stores keep in the partition (shared/stores/session-owners.ts),
 * and one descending Query from that record reads it with the latest checkpoint (latestWith).
 * Checkpoints written before this layout sort under `c#<ns>#` (`c##` for the root); they are
 * still read (LEGACY), and written to only by a run that goes on from one (its pending writes).
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

/** The root namespace's component: `~` sorts above every escaped character, and no escaped namespace is `~`. */
const ROOT = HIGH;

/** A layout's checkpoint and pending-write keys: under `tag`, with the namespace written by `ns`. */
function checkpointKeys(tag: string, ns: (ns: string) => string) {
  const checkpoint = (namespace: string, id: string) => `${tag}#${ns(namespace)}#${escapeComponent(id)}`;
  return {
    namespacePrefix: (namespace: string) => `${tag}#${ns(namespace)}#`,
    allCheckpointsPrefix: () => `${tag}#`,
    checkpoint,
    write: (namespace: string, id: string, taskId: string, idx: number) =>
      `${checkpoint(namespace, id)}#w#${escapeComponent(taskId)}#${idx}`,
  };
}

export const keys = {
  ...checkpointKeys("s", (ns) => (ns === "" ? ROOT : escapeComponent(ns))),
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

/**
 * The layout checkpoints were written in before the root namespace sorted last: read, and written
 * only beside a checkpoint read in it (the pending writes of a run that goes on from one).
 */
export const LEGACY = checkpointKeys("c", escapeComponent);

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
  const layout = parts[0] === "s" ? "current" : parts[0] === "c" ? "legacy" : undefined;
  if (layout !== undefined && (parts.length === 3 || (parts.length === 6 && parts[3] === "w"))) {
    const ns = layout === "current" && parts[1] === ROOT ? "" : unescapeComponent(parts[1]!);
    const checkpointId = unescapeComponent(parts[2]!);
    if (parts.length === 3) return { kind: "checkpoint", ns, checkpointId };
    return { kind: "write", ns, checkpointId, taskId: unescapeComponent(parts[4]!), idx: Number(parts[5]) };
  }
  if (parts[0] === "l" && parts.length === 5) {
    return { kind: "log", position: Number(parts[3]), chain: parts[4]! };
  }
  return { kind: "other" };
}
