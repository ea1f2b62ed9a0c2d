import type { S3Event, S3EventRecord } from "aws-lambda";
import type { Backends } from "../shared/backends";
import { fileService } from "../shared/files/service";
import { createLogger } from "../shared/logger";
import { awsWiring, type Wiring } from "../shared/wiring";
import { filesUnavailable } from "./files";

const logger = createLogger("file-uploaded");

/**
 * The bucket's ObjectCreated notification: settles the file as the complete route does, so an
 * upload completes even when the client never calls it, and deletes bytes no file takes (its file
 * or session deleted, or rejected, before they landed). Idempotent (a settled file stays so).
 */
export function createUploadNotificationHandler(backends: () => Promise<Backends> | Backends) {
  return async (event: S3Event) => {
    const resolved = await backends();
    const service = fileService(resolved);
    if (!service) throw filesUnavailable();
    // Each record on its own: a malformed one is logged and skipped (retrying cannot mend it), and
    // one that could not be settled fails the invocation after the others were tried, so Lambda's
    // retry of the whole event (each record idempotent) settles it.
    let failed: unknown;
    for (const record of event.Records ?? []) {
      const key = objectKey(record);
      if (key === undefined) {
        logger.error("malformed S3 event record; skipped", { record: JSON.stringify(record).slice(0, 500) });
        continue;
      }
      try {
        const outcome = await service.landed(key);
        if (outcome === "ignored") logger.warn("object key not made by this API; ignored", { key });
        else if (outcome === "discarded") logger.warn("upload discarded: no file takes it", { key });
        else logger.info("upload landed", { key, outcome });
      } catch (err) {
        logger.warn("upload not settled; the event will be retried", { key, error: String(err) });
        failed ??= err;
      }
    }
    if (failed !== undefined) throw failed;
  };
}

/** The record's object key as S3 sends it (URL-encoded, spaces as +), or undefined for a record that has none. */
function objectKey(record: S3EventRecord): string | undefined {
  const raw: unknown = record?.s3?.object?.key;
  if (typeof raw !== "string") return undefined;
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/** The handler on any wiring: Lambda's below (the bucket's notification), or the local stack's (its upload route). */
export const createHandler = ({ backends }: Wiring) => createUploadNotificationHandler(backends);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
