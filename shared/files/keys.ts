/**
 * Objects go under a per-user prefix, so a grant can be scoped to users/* and a user's objects listed
 * alone. Periods are encoded too: a user id "." or ".." would otherwise be a path segment that URL
 * handling removes, and the signed URL would name another key.
 */
export function objectKey(userId: string, sessionId: string, fileId: string): string {
  return `${userFolder(userId)}sessions/${sessionId}/${fileId}`;
}

/** Every object of one user's is under this prefix (erasure removes it whole). */
export const userFolder = (userId: string) => `users/${encodeURIComponent(userId).replaceAll(".", "%2E")}/`;

/** The inverse, for the bucket's notifications; undefined for a key this API did not make. */
export function parseObjectKey(key: string): { userId: string; sessionId: string; fileId: string } | undefined {
  const m = /^users\/([^/]+)\/sessions\/([0-9a-f-]{36})\/([0-9a-f-]{36})$/.exec(key);
  return m ? { userId: decodeURIComponent(m[1]!), sessionId: m[2]!, fileId: m[3]! } : undefined;
}
