import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { randomUUID } from "node:crypto";
import { AppError, badRequest, forbidden } from "../shared/errors";
import { exportKey } from "../shared/files/keys";
import { json } from "../shared/http";
import { adminActorId, callerId, isAdminCaller } from "../shared/identity";
import { createLogger } from "../shared/logger";
import { quotaScope, windowsOf } from "../shared/quotas";
import type { RouteSchemas } from "../shared/request-schemas";
import { ErasureMarks } from "../shared/stores/erasure-marks";
import { UserUsage } from "../shared/stores/user-usage";
import { resultBytes } from "../shared/response-bytes";
import { identifier } from "../shared/text";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("me");

const UserPath = z.object({ id: identifier() });

/** How long an export's download link works. */
const EXPORT_LINK_SECONDS = 900;
const JSON_FILE = { "content-type": "application/json", "content-disposition": 'attachment; filename="export.json"' };

/**
 * A user's own data (docs/user-data.md):
 * GET    /api/me/usage              today's turns and tokens against the deployment's quotas
 * GET    /api/me/export             everything held about the caller, as one JSON document (a large one:
 *                                   a download link to it, written to the attachments bucket)
 * DELETE /api/me                    erases everything held about the caller, in every store
 * DELETE /api/admin/users/{id}      the same for any user, by an admin (anyone else: 403)
 * Each acts on the caller's own id only (the admin route excepted): there is nobody else's to name.
 */
export function createMeHandler(backends: () => Promise<Backends> | Backends, corsOrigins?: () => string | undefined) {
  return apiHandler(
    logger,
    async (event) => {
      const all = await backends();
      const { config } = all;
      const route = `${event.httpMethod} ${event.resource}`;
      if (route === "DELETE /api/admin/users/{id}") {
        // The role first: a non-admin learns nothing, not even whether the id is well formed.
        if (!isAdminCaller(event, config.AUTH_MODE)) throw forbidden("users are erased by admins only");
        const id = UserPath.safeParse(event.pathParameters ?? {});
        if (!id.success) throw badRequest("invalid_user_id", `id: ${id.error.issues[0]!.message}`);
        return erase(all, id.data.id, adminActorId(event, config.AUTH_MODE));
      }
      const userId = callerId(event, config.AUTH_MODE);
      if (route === "GET /api/me/usage") {
        const usage = new UserUsage(all.dynamo, config.CHECKPOINT_TABLE, config.USER_QUOTAS);
        const counts = async (projectId?: string) => {
          const today = await usage.today(userId, undefined, projectId);
          const { limits } = quotaScope(config.USER_QUOTAS, projectId);
          return {
            turns: today.turns,
            tokens: today.tokens,
            turns_this_minute: today.turnsThisMinute,
            limits: { turns_per_minute: limits.turnsPerMinute ?? null, tokens_per_day: limits.tokensPerDay ?? null },
          };
        };
        // The projects with quotas of their own, each counted apart (a GetItem each; a deployment names few).
        const projects = Object.keys(config.USER_QUOTAS.projects ?? {});
        const [deployment, ...own] = await Promise.all([counts(), ...projects.map((p) => counts(p))]);
        return json(200, {
          day: windowsOf(Date.now()).day,
          ...deployment,
          projects: Object.fromEntries(projects.map((p, i) => [p, own[i]])),
          // With no quota set, turns are not counted (a turn then costs no request for it).
          counted: usage.enabled,
        });
      }
      if (route === "GET /api/me/export") {
        const began = Date.now();
        const { exportUser } = await import("../shared/user-export");
        const text = JSON.stringify(await exportUser(all, userId));
        const bytes = Buffer.byteLength(text);
        const answered = resultBytes(text);
        const headers = { "cache-control": "no-store" };
        if (answered <= config.EXPORT_INLINE_MAX_BYTES)
          return { statusCode: 200, headers: { ...headers, ...JSON_FILE }, body: text };
        // Past Lambda's response cap: handed over through the bucket, as a link that expires.
        if (!all.files)
          throw new AppError(
            422,
            "export_too_large",
            `the export is ${bytes} bytes, over the ${config.EXPORT_INLINE_MAX_BYTES} a response holds, and this deployment has no attachments bucket to hand it over by link`,
          );
        const key = exportKey(userId, `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID()}`);
        await all.files.write(key, Buffer.from(text), "application/json");
        // Asked after the write: an erasure that emptied the folder before it would leave it there.
        if (await new ErasureMarks(all.dynamo, config.CHECKPOINT_TABLE).ranSince(userId, began)) {
          await all.files.delete([key]);
          throw new AppError(
            409,
            "erased_during_export",
            "this user's data was erased while the export was being made; nothing of it was kept",
          );
        }
        const url = await all.files.downloadUrl(key, "export.json", EXPORT_LINK_SECONDS);
        return json(200, { download_url: url, bytes, expires_in_seconds: EXPORT_LINK_SECONDS }, headers);
      }
      return erase(all, userId, userId);
    },
    { corsOrigins },
  );
}

async function erase(backends: Backends, userId: string, by: string) {
  // Loaded here: only an erasure needs the saver, and it brings LangGraph's checkpoint package.
  const { eraseUser } = await import("../graph/chat/user-erasure");
  const report = await eraseUser(backends, userId);
  logger.info("user erased", { erasedBy: by === userId ? "self" : "admin", report });
  return json(200, { erased: true, ...report });
}

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "GET /api/me/usage": {},
  "GET /api/me/export": {},
  "DELETE /api/me": {},
  "DELETE /api/admin/users/{id}": { path: UserPath },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) => createMeHandler(backends, () => config().CORS_ORIGINS);

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
