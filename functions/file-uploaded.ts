import type { S3Event } from "aws-lambda";
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
    for (const record of event.Records ?? []) {
      const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
      const outcome = await service.landed(key);
      if (outcome === "ignored") logger.warn("object key not made by this API; ignored", { key });
      else if (outcome === "discarded") logger.warn("upload discarded: no file takes it", { key });
      else logger.info("upload landed", { key, outcome });
    }
  };
}

/** The handler on any wiring: Lambda's below (the bucket's notification), or the local stack's (its upload route). */
export const createHandler = ({ backends }: Wiring) => createUploadNotificationHandler(backends);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
