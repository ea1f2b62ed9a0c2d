/**
 * A list's keyset cursor: a JSON array, as base64url, so a client passes it back untouched. Each
 * list checks what it decodes to; anything that is not such an array of at most `maxChars` is
 * undefined here, before any check of its own.
 */
export const encodeJsonCursor = (position: unknown[]) => Buffer.from(JSON.stringify(position)).toString("base64url");

export function decodeJsonCursor(cursor: string, maxChars: number): unknown[] | undefined {
  if (cursor.length > maxChars || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
