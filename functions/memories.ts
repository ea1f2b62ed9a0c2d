import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import { AppError, badRequest, notFound } from "../shared/errors";
import { callerId } from "../shared/identity";
import { json, parseQuery } from "../shared/http";
import { createLogger } from "../shared/logger";
import type { RouteSchemas } from "../shared/request-schemas";
import type { Backends } from "../shared/backends";
import { awsWiring, type Wiring } from "../shared/wiring";
import { storable } from "../shared/text";

const logger = createLogger("memories");

const ListQuery = z.object({
  category: z.optional(storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(64)))),
  tag: z.optional(storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(64)))),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(200)), 50),
  /** 1: also the memories a newer one replaced, each with `superseded_by` */
  superseded: z.pipe(
    z._default(z.enum(["0", "1"], { error: 'must be "0" or "1"' }), "0"),
    z.transform((v) => v === "1"),
  ),
});

const unavailable = (cause?: unknown) =>
  new AppError(503, "memory_unavailable", "memories cannot be read or changed right now", { cause });

/**
 * GET /api/memories?category=&tag=&limit=&superseded=1  the caller's memories, newest first
 *                                           (superseded=1 adds those a newer one replaced)
 * DELETE /api/memories/{id}                 forget one of them
 * Users see and correct what the agent remembers about them; nobody else's.
 */
export function createMemoriesHandler(
  backends: () => Promise<Backends> | Backends,
  corsOrigins?: () => string | undefined,
) {
  return apiHandler(
    logger,
    async (event) => {
      const { config, store } = await backends();
      const userId = callerId(event, config.AUTH_MODE);
      if (!store) throw unavailable();
      if (event.httpMethod === "DELETE") {
        const id = z.uuid().safeParse(event.pathParameters?.id);
        if (!id.success) throw badRequest("invalid_memory_id", "memory id must be a UUID");
        const deleted = await store.deleteMemory(userId, id.data).catch((err) => {
          throw unavailable(err);
        });
        if (!deleted) throw notFound("memory_not_found", "no such memory");
        return { statusCode: 204, body: "" };
      }
      const query = parseQuery(event, ListQuery);
      const memories = await store.listMemories(userId, query).catch((err) => {
        throw unavailable(err);
      });
      return json(200, {
        memories: memories.map((m) => ({
          id: m.id,
          content: m.content,
          category: m.category,
          tags: m.tags,
          metadata: m.metadata,
          project_id: m.projectId,
          created_at: m.createdAt,
          updated_at: m.updatedAt,
          ...(m.supersededBy ? { superseded_by: m.supersededBy } : {}),
        })),
      });
    },
    { corsOrigins },
  );
}

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "GET /api/memories": { query: ListQuery },
  "DELETE /api/memories/{id}": { path: z.object({ id: z.uuid() }) },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createMemoriesHandler(backends, () => config().CORS_ORIGINS);

// The backends (DynamoDB, Supabase and their clients) load with the first request (shared/deferred.ts).
export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
