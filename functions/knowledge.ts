import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends, KnowledgeBucket } from "../shared/backends";
import { contentTypeOf } from "../shared/documents/document-types";
import { AppError, badRequest, forbidden, notFound } from "../shared/errors";
import { json, parseJsonBody, parseQuery } from "../shared/http";
import { adminActorId, isAdminCaller } from "../shared/identity";
import { createLogger } from "../shared/logger";
import type { DocumentRecord } from "../shared/stores/agent-store";
import { deferredRuntime } from "../shared/deferred";
import type { RouteSchemas } from "../shared/request-schemas";
import { decodeJsonCursor, encodeJsonCursor } from "../shared/json-cursor";
import { isStorableText, storable, storableText } from "../shared/text";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("knowledge");

/** A document's name under the documents prefix: a relative path, as S3 keys and the drop folder allow. */
const Source = storable(z.string().check(z.minLength(1), z.maxLength(512))).check(
  z.refine(
    (s) => !s.startsWith("/") && !s.split("/").some((part) => part === "" || part === "." || part === ".."),
    "must be a relative path without empty, . or .. parts",
  ),
  z.refine(
    (s) => Buffer.byteLength(s) <= 1024 && s.split("/").every((part) => Buffer.byteLength(part) <= 255),
    "must be at most 1024 bytes of UTF-8, each part between slashes at most 255",
  ),
);

const Upload = z.strictObject({
  // Not a hidden file (a part beginning with a dot): the local drop folder leaves those out (its
  // own temporary files are such), so one would be taken and never ingested there. A document
  // already in the bucket under such a name is still read and deleted by its name.
  source: Source.check(
    z.refine(
      (s) => !s.split("/").some((part) => part.startsWith(".")),
      "must not name a hidden file (a part beginning with a dot)",
    ),
  ),
  bytes: z.number().check(z.int(), z.gte(1)),
  content_type: z.optional(storableText({ min: 1, max: 255 })),
});

/** A page's cursor: the source (relative to the prefix) the previous page ended on, `["after", source]`. */
const pageCursor = (source: string) => encodeJsonCursor(["after", source]);
function afterOf(cursor: string): string | undefined {
  const value = decodeJsonCursor(cursor, 3000);
  if (value?.length !== 2 || value[0] !== "after") return undefined;
  // Any key the list can end a page on (one put in the bucket directly need not be a Source the upload route takes).
  const [, source] = value;
  return typeof source === "string" && source.length <= 1024 && isStorableText(source) ? source : undefined;
}

/** At most 1,000 a page: about 1.3 MB at the longest names S3 allows, under Lambda's 6 MB. */
const ListQuery = z.object({
  deleted: z._default(z.enum(["0", "1"]), "0"),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(1000)), 500),
  cursor: z.optional(
    storableText({ min: 1, max: 3000 }).check(
      z.refine((c) => afterOf(c) !== undefined, "is not a cursor this API returned (use next_cursor as given)"),
    ),
  ),
});
const SearchQuery = z.object({
  q: storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(1000))),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(10)), 5),
});

const UPLOAD_URL_SECONDS = 900;

/** The search tool and the embedder: loaded by the first search only (shared/deferred.ts). */
const searchRuntime = deferredRuntime(
  () =>
    Promise.all([
      import("../graph/tools/knowledge-search"),
      import("../graph/tools/tool"),
      import("../shared/models/embeddings"),
    ]),
  async ([{ searchKnowledge }, { runTool }, { createEmbeddings }]) => ({ searchKnowledge, runTool, createEmbeddings }),
);

const unavailable = (cause?: unknown) =>
  new AppError(503, "knowledge_unavailable", "the knowledge base cannot be read right now", { cause });
const documentNotFound = () => notFound("document_not_found", "no such document in the knowledge base");

/**
 * The knowledge base as its admins manage it (an admin role: shared/identity.ts; anyone else 403).
 *
 * GET    /api/knowledge/documents             every document: status, reason, size, chunks (?deleted=1 adds deleted ones)
 * GET    /api/knowledge/documents/{source}    one document with its chunks' previews
 * DELETE /api/knowledge/documents/{source}    deletes the object; the bucket's event then deletes its chunks
 * POST   /api/knowledge/uploads               {source, bytes}: a presigned PUT into the documents prefix
 * GET    /api/knowledge/search?q=             what search_knowledge_base returns for q, with scores
 *
 * Documents change only through the bucket, so the one ingestion path (and its ordering by S3
 * sequencer) stays the only writer of the knowledge base.
 */
export function createKnowledgeHandler(
  backends: () => Promise<Backends> | Backends,
  corsOrigins?: () => string | undefined,
) {
  return apiHandler(
    logger,
    async (event) => {
      const { config, store, knowledge } = await backends();
      const userId = adminActorId(event, config.AUTH_MODE);
      if (!isAdminCaller(event, config.AUTH_MODE)) throw forbidden("the knowledge base is managed by admins only");
      if (!store || !knowledge) throw unavailable();
      const documentId = (source: string) => `${knowledge.bucket}/${knowledge.prefix}${source}`;

      if (event.resource === "/api/knowledge/search") {
        const { q, limit } = parseQuery(event, SearchQuery);
        const { searchKnowledge, runTool, createEmbeddings } = await searchRuntime();
        // The same tool the agent calls, so this is what the agent would have found.
        const embeddings = (await createEmbeddings(config)).value;
        const found = await runTool(
          searchKnowledge,
          { query: q, limit },
          {
            scope: { userId, projectId: null, sessionId: null },
            deps: { store, embeddings, minMemoryScore: config.MEMORY_MIN_SCORE },
          },
        );
        return json(found.success === false ? 503 : 200, found);
      }

      if (event.resource === "/api/knowledge/uploads") {
        const upload = parseJsonBody(event, Upload, { maxBytes: 4096 });
        const contentType = upload.content_type ?? contentTypeOf(upload.source);
        if (contentTypeOf(upload.source) === "application/octet-stream")
          throw badRequest(
            "unsupported_document_type",
            "source must end in .md, .markdown, .txt, .html, .htm, .json, .pdf or .docx",
          );
        if (upload.bytes > config.KNOWLEDGE_UPLOAD_MAX_BYTES)
          throw new AppError(
            413,
            "document_too_large",
            `bytes must be at most ${config.KNOWLEDGE_UPLOAD_MAX_BYTES} (ingestion skips documents over ${config.INGEST_MAX_BYTES})`,
          );
        const grant = await knowledge.objects.uploadUrl(
          `${knowledge.prefix}${upload.source}`,
          contentType,
          upload.bytes,
          UPLOAD_URL_SECONDS,
        );
        logger.info("document upload granted", { source: upload.source, bytes: upload.bytes });
        return json(200, {
          source: upload.source,
          upload_url: grant.url,
          method: "PUT",
          headers: grant.headers,
          expires_in: UPLOAD_URL_SECONDS,
        });
      }

      if (event.resource === "/api/knowledge/documents") {
        const { deleted, limit, cursor } = parseQuery(event, ListQuery);
        const after = cursor === undefined ? null : documentId(afterOf(cursor)!);
        // One more than the page: whether there is a next one, without an empty last page.
        const documents = await store
          .listDocumentsPage({
            bucket: knowledge.bucket,
            prefix: knowledge.prefix,
            after,
            limit: limit + 1,
            deleted: deleted === "1",
          })
          .catch((err) => {
            throw unavailable(err);
          });
        const page = documents.slice(0, limit).map((d) => view(d, knowledge));
        return json(200, {
          documents: page,
          ...(documents.length > limit ? { next_cursor: pageCursor(page.at(-1)!.source) } : {}),
        });
      }

      const source = Source.safeParse(event.pathParameters?.source);
      if (!source.success)
        throw badRequest("invalid_source", `source: ${source.error.issues[0]!.message} (URL-encode any /)`);
      // One document by its id, not a read of the whole list (which only grows: tombstones stay).
      const record = await store.getDocument(documentId(source.data)).catch((err) => {
        throw unavailable(err);
      });
      if (!record || record.status === "deleted") throw documentNotFound();

      if (event.httpMethod === "DELETE") {
        await knowledge.objects.delete([`${knowledge.prefix}${source.data}`]);
        logger.info("document deleted", { source: source.data });
        return json(202, { source: source.data, status: "deleting" });
      }
      const chunks = await store.documentChunks(record.documentId).catch((err) => {
        throw unavailable(err);
      });
      return json(200, { ...view(record, knowledge), chunks });
    },
    { corsOrigins },
  );
}

/** A document as the admin routes show it: its source relative to the prefix. */
function view(d: DocumentRecord, knowledge: KnowledgeBucket) {
  return {
    source: d.source.slice(knowledge.prefix.length),
    status: d.status ?? "processing",
    ...(d.reason ? { reason: d.reason } : {}),
    bytes: d.bytes,
    chunks: d.chunkCount,
    content_type: d.contentType,
    updated_at: d.updatedAt,
    sequencer: d.sequencer,
    // S3's ETag (the MD5 of a single-part upload) of the version the status describes: a client
    // compares it with a file's MD5 to know the knowledge base already holds that content.
    etag: d.statusEtag ?? d.etag,
  };
}

const SourcePath = z.object({ source: Source });

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "GET /api/knowledge/documents": { query: ListQuery },
  "GET /api/knowledge/documents/{source}": { path: SourcePath },
  "DELETE /api/knowledge/documents/{source}": { path: SourcePath },
  "POST /api/knowledge/uploads": { body: Upload },
  "GET /api/knowledge/search": { query: SearchQuery },
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createKnowledgeHandler(backends, () => config().CORS_ORIGINS);

// The backends (Supabase, S3) load with the first request (shared/deferred.ts).
export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
