/**
 * Whether `value` contains `filter` as Postgres's jsonb `@>` reads it, which is how LangGraph's
 * server filters threads and assistants by metadata and values: an object contains each key of the
 * filter with a value that contains the filter's, in any key order; an array contains each element
 * of the filter's somewhere; anything else is equal. `{"o": {"a": 1}}` finds `{"o": {"a": 1, "b": 2}}`.
 */
export function jsonContains(value: unknown, filter: unknown): boolean {
  if (Array.isArray(filter)) {
    if (!Array.isArray(value)) return false;
    return filter.every((f) => value.some((v) => jsonContains(v, f)));
  }
  if (filter !== null && typeof filter === "object") {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    return Object.entries(filter).every(([k, f]) => Object.hasOwn(record, k) && jsonContains(record[k], f));
  }
  return value === filter;
}
