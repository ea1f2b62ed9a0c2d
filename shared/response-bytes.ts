/**
 * What a buffered Lambda response's body counts against the 6 MB cap: the result is JSON, with
 * the body a JSON string in it, so the body's quotes count, and each quote, backslash and newline
 * inside it takes a byte more.
 */
export const resultBytes = (body: string) => Buffer.byteLength(JSON.stringify(body));

/**
 * The newest of `items` whose JSON array fits in `maxBytes` as resultBytes counts it (at least the
 * newest one), and where they start: the items before `start` are for another page.
 */
export function newestWithin<T>(items: readonly T[], maxBytes: number): { start: number; page: T[] } {
  let bytes = resultBytes("[]");
  let start = items.length;
  while (start > 0) {
    // An item's share: its JSON, escaped as the body's string escapes it (without that string's quotes), and a comma.
    const size = resultBytes(JSON.stringify(items[start - 1])) - 2 + (start < items.length ? 1 : 0);
    if (bytes + size > maxBytes && start < items.length) break;
    bytes += size;
    start--;
  }
  return { start, page: items.slice(start) };
}
