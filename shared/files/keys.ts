/** Objects go under a per-user prefix, so a grant can be scoped to users/* and a user's objects listed alone. */
export function objectKey(userId: string, sessionId: string, fileId: string): string {
  return `users/${encodeURIComponent(userId)}/sessions/${sessionId}/${fileId}`;
}

/** The inverse, for the bucket's notifications; undefined for a key this API did not make. */
export function parseObjectKey(key: string): { userId: string; sessionId: string; fileId: string } | undefined {
  const m = /^users\/([^/]+)\/sessions\/([0-9a-f-]{36})\/([0-9a-f-]{36})$/.exec(key);
  return m ? { userId: decodeURIComponent(m[1]!), sessionId: m[2]!, fileId: m[3]! } : undefined;
}
