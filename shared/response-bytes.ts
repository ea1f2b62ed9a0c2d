/**
 * What a buffered Lambda response's body counts against the 6 MB cap: the result is JSON, with
 * the body a string in it, so each quote, backslash and newline of the body takes a byte more.
 */
export const resultBytes = (body: string) => Buffer.byteLength(JSON.stringify(body)) - 2;

/**
 * The newest of `items` whose JSON array fits in `maxBytes` as resultBytes counts it (at least the
 * newest one), and where they start: the items before `start` are for another page.
 */
export function newestWithin<T>(items: readonly T[], maxBytes: number): { start: number; page: T[] } {
  let bytes = 2; // the brackets
  let start = items.length;
  while (start > 0) {
    const size = resultBytes(JSON.stringify(items[start - 1])) + (start < items.length ? 1 : 0);
    if (bytes + size > maxBytes && start < items.length) break;
    bytes += size;
    start--;
  }
  return { start, page: items.slice(start) };
}
