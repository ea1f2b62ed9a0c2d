import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { AppError, badRequest } from "../shared/errors";
import { json, parseJsonBody } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import { storableText } from "../shared/text";
import { fileService } from "../shared/files/service";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("files");

const CreateFile = z.object({
  // Storable text (shared/text.ts): a lone surrogate in a name was accepted, and every later turn
  // that listed the session's files failed on it.
  name: storableText({ min: 1, max: 255, trim: true }).check(
    z.refine(
      (n) => ![...n].some((c) => c.charCodeAt(0) < 0x20 || c === "/" || c === "\\"),
      "must not contain slashes or control characters",
    ),
  ),
  media_type: storableText({ min: 1, max: 100 }),
  bytes: z.number().check(z.int(), z.positive()),
});

export const filesUnavailable = () =>
  new AppError(503, "files_unavailable", "file attachments are not configured (ATTACHMENTS_BUCKET)");

/**
 * POST   /api/sessions/{id}/files                      {name, media_type, bytes} -> {file_id, upload_url, expires_at}
 * POST   /api/sessions/{id}/files/{file_id}/complete   checks the upload: ready, or rejected with a reason
 * GET    /api/sessions/{id}/files                      the session's files with their status (data files: columns, rows)
 * DELETE /api/sessions/{id}/files/{file_id}
 * GET    /api/files/{file_id}                          a short-lived download URL
 * Every route is the owner's only: anyone else gets 404.
 */
export function createFilesHandler(
  backends: () => Promise<Backends> | Backends,
  corsOrigins?: () => string | undefined,
) {
  return apiHandler(
    logger,
    async (event) => {
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
    },
    { corsOrigins },
  );
}

const SessionPath = z.object({ id: z.uuid() });
const FilePath = z.extend(SessionPath, { file_id: z.uuid() });

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "POST /api/sessions/{id}/files": { path: SessionPath, body: CreateFile },
  "GET /api/sessions/{id}/files": { path: SessionPath },
  "DELETE /api/sessions/{id}/files/{file_id}": { path: FilePath },
  "POST /api/sessions/{id}/files/{file_id}/complete": { path: FilePath },
  "GET /api/files/{file_id}": { path: z.object({ file_id: z.uuid() }) },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createFilesHandler(backends, () => config().CORS_ORIGINS);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
