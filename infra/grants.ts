/**
 * What the manifest's bucket grants (infra/manifest.ts) allow, as plain data: the AWS stack turns
 * these into IAM statements, and the local stack enforces the same on each function's stand-ins
 * (infra/local/granted-backends.ts), so a function that reaches past its grants fails its tests
 * locally rather than with AccessDenied on its first deployment.
 */
import type { Grant } from "./manifest";

/** Every attachment is under users/<user>/ (shared/files/keys.ts). */
export const USERS_PREFIX = "users/";
/** A user's large exports: users/<user>/exports/<export>.json. */
export const EXPORTS_OBJECTS = `${USERS_PREFIX}*/exports/*`;

/** What a function may do with attachments: each attachments grant of the manifest names one of these. */
export type AttachmentAccess = "files" | "chat" | "delete" | "read" | "erase";

export const ATTACHMENT_ACCESS: Partial<Record<Grant, AttachmentAccess>> = {
  attachments: "files",
  "attachments:chat": "chat",
  "attachments:delete": "delete",
  "attachments:read": "read",
  "attachments:erase": "erase",
};

/** An S3 action allowed on the keys an IAM pattern matches (`*` matches any characters, `/` too). */
export interface ObjectPermission {
  action: string;
  keys: string;
}

const OBJECT_ACTIONS: Record<AttachmentAccess, string[]> = {
  // A presigned URL acts with its signer's permissions: PutObject for uploads, GetObject for
  // downloads and the completion check, DeleteObject for DELETE and rejected uploads.
  files: ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
  // A chat turn reads its session's files and stores the images a message carries inline (a PUT
  // the bucket takes only onto no object, so it cannot replace one).
  chat: ["s3:GetObject", "s3:PutObject"],
  delete: ["s3:DeleteObject"],
  // The data function reads the files it is asked about; it writes and deletes nothing.
  read: ["s3:GetObject"],
  // A user's export signs download links (GetObject); erasure lists what is under the user's folder
  // too, since an upload never completed has no record (LISTS, below).
  erase: ["s3:DeleteObject", "s3:GetObject"],
};

/**
 * Where an access may list the bucket. The erasure lists a user's folder. The files and chat
 * functions list nothing, but S3 answers a GetObject of a key that is not there with 404 only to a
 * caller that may list the bucket, and with 403 AccessDenied to any other: without it, completing
 * an upload whose bytes never came, or reading an image the bucket's lifecycle expired, failed as a
 * 500 rather than as the 409 or 404 the code answers for a missing object. Their listing carries no
 * prefix condition (a GetObject has no s3:prefix to match); the bucket holds nothing but users/, so
 * it names no more than their object actions reach. The data function does not list: its role
 * reads objects and nothing else, and a file gone from under it is an engine error either way.
 */
const LISTS: Partial<Record<AttachmentAccess, string>> = {
  files: "*",
  chat: "*",
  erase: `${USERS_PREFIX}*`,
};

/**
 * The permissions an attachments access gives, in the order the stack writes them: its object
 * actions on users/*, its listing, and (erase) writing the user's exports.
 */
export function attachmentPermissions(access: AttachmentAccess): ObjectPermission[] {
  const list = LISTS[access];
  return [
    ...OBJECT_ACTIONS[access].map((action) => ({ action, keys: `${USERS_PREFIX}*` })),
    ...(list ? [{ action: "s3:ListBucket", keys: list }] : []),
    ...(access === "erase" ? [{ action: "s3:PutObject", keys: EXPORTS_OBJECTS }] : []),
  ];
}

/** The knowledge admin routes presign uploads and delete documents under the prefix: nothing else. */
export const DOCUMENT_ADMIN_ACTIONS = ["s3:PutObject", "s3:DeleteObject"];

/** Whether `key` is one an IAM resource pattern (IAM's `*` and `?` wildcards) names. */
export function keyMatches(pattern: string, key: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "s").test(key);
}
