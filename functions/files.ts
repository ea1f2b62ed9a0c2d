import type { S3Event } from "aws-lambda";
import * as z from "zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { deferredRuntime } from "../shared/deferred";
import { AppError, badRequest } from "../shared/errors";
import { json, parseJsonBody } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import { parseObjectKey } from "../shared/files/keys";
import { FileRecords } from "../shared/files/records";
import { fileService } from "../shared/files/service";

const logger = createLogger("files");

const CreateFile = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .refine((n) => !/[\u0000-\u001f/\\]/.test(n), "must not contain slashes or control characters"),
  media_type: z.string().min(1).max(100),
  bytes: z.number().int().positive(),
});

const filesUnavailable = () =>
  new AppError(503, "files_unavailable", "file attachments are not configured (ATTACHMENTS_BUCKET)");

/**
 * POST   /api/sessions/{id}/files                      {name, media_type, bytes} -> {file_id, upload_url, expires_at}
 * POST   /api/sessions/{id}/files/{file_id}/complete   checks the upload: ready, or rejected with a reason
 * GET    /api/sessions/{id}/files                      the session's files with their status (data files: columns, rows)
 * DELETE /api/sessions/{id}/files/{file_id}
 * GET    /api/files/{file_id}                          a short-lived download URL
 * Every route is the owner's only: anyone else gets 404.
 */
export function createFilesHandler(backends: () => Promise<Backends> | Backends) {
  return apiHandler(logger, async (event) => {
    const resolved = await backends();
    const userId = callerId(event, resolved.config.AUTH_MODE);
    const service = fileService(resolved);
    if (!service) throw filesUnavailable();
    const fileId = event.pathParameters?.file_id;
    if (fileId !== undefined && !z.uuid().safeParse(fileId).success)
      throw badRequest("invalid_file_id", "file id must be a UUID");

    if (event.resource === "/api/files/{file_id}") return json(200, await service.download(userId, fileId!));

    const session = z.uuid().safeParse(event.pathParameters?.id);
    if (!session.success) throw badRequest("invalid_session_id", "session id must be a UUID");
    const sessionId = session.data;
    if (event.resource === "/api/sessions/{id}/files") {
      if (event.httpMethod === "GET") return json(200, { files: await service.list(userId, sessionId) });
      const body = parseJsonBody(event, CreateFile, { maxBytes: 4096 });
      return json(201, await service.create(userId, sessionId, body));
    }
    if (event.resource === "/api/sessions/{id}/files/{file_id}/complete")
      return json(200, await service.complete(userId, sessionId, fileId!));
    await service.remove(userId, sessionId, fileId!);
    return { statusCode: 204, body: "" };
  });
}

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

const deferred = deferredRuntime(
  () => import("../shared/backends"),
  ({ awsBackends }) => awsBackends(),
);
export const handler = createFilesHandler(deferred);
export const notificationHandler = createUploadNotificationHandler(deferred);
export { loadDeferred } from "../shared/deferred";
