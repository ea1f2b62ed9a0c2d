import { createHash } from "node:crypto";

/** A user id that can stand in a key as it is: no dot segment, nothing to encode, short. */
const PLAIN_USER = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,64}$/;

/**
 * The user's part of an object key: the id itself when it is plain, else "~" and its SHA-256
 * (base64url; "~" is no plain id's character, so the two never meet). An id as a key part as it
 * was (URL-encoded) broke uploads: "." and ".." are dot segments a URL loses on the way (the
 * signature then fails), and a long non-ASCII id encodes past a file name's 255 bytes and near
 * S3's 1024-byte keys.
 */
export function userKeyPart(userId: string): string {
  return PLAIN_USER.test(userId) ? userId : `~${createHash("sha256").update(userId, "utf8").digest("base64url")}`;
}

/** Every object of one user's is under this prefix: a grant can be scoped to users/*, and erasure removes it whole. */
export const userFolder = (userId: string) => `users/${userKeyPart(userId)}/`;

/** A user's export too large to answer inline, under the user's folder (so an erasure takes it too). */
export const exportKey = (userId: string, exportId: string) => `${userFolder(userId)}exports/${exportId}.json`;

export function objectKey(userId: string, sessionId: string, fileId: string): string {
  return `${userFolder(userId)}sessions/${sessionId}/${fileId}`;
}

/** The session and file of a key this API made, for the bucket's notifications; undefined for any other key. */
export function parseObjectKey(key: string): { sessionId: string; fileId: string } | undefined {
  const m = /^users\/[^/]+\/sessions\/([0-9a-f-]{36})\/([0-9a-f-]{36})$/.exec(key);
  return m ? { sessionId: m[1]!, fileId: m[2]! } : undefined;
}
