import type { S3Event } from "aws-lambda";
import type { Backends } from "../shared/backends";
import { parseObjectKey } from "../shared/files/keys";
import { FileRecords } from "../shared/files/records";
import { fileService } from "../shared/files/service";
import { createLogger } from "../shared/logger";
import { awsWiring, type Wiring } from "../shared/wiring";
import { filesUnavailable } from "./files";

const logger = createLogger("file-uploaded");

/**
 * The bucket's ObjectCreated notification: settles the file as the complete route does, so an
 * upload completes even when the client never calls it. Idempotent (a settled file stays so).
 */
export function createUploadNotificationHandler(backends: () => Promise<Backends> | Backends) {
  return async (event: S3Event) => {
    const resolved = await backends();
    const service = fileService(resolved);
    if (!service) throw filesUnavailable();
    const records = new FileRecords(resolved.dynamo, resolved.config.CHECKPOINT_TABLE);
    for (const record of event.Records ?? []) {
      const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
      const parsed = parseObjectKey(key);
      if (!parsed) {
        logger.warn("object key not made by this API; ignored", { key });
        continue;
      }
      const file = await records.get(parsed.sessionId, parsed.fileId);
      if (!file || file.key !== key) {
        logger.warn("no pending file for this object; ignored", { key });
        continue;
      }
      const settled = await service.settle(file);
      logger.info("upload settled", { fileId: file.file_id, status: settled.status, reason: settled.reason });
    }
  };
}

/** The handler on any wiring: Lambda's below (the bucket's notification), or the local stack's (its upload route). */
export const createHandler = ({ backends }: Wiring) => createUploadNotificationHandler(backends);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
