import type { Embeddings } from "@langchain/core/embeddings";
import { mkdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { searchKnowledge } from "../../graph/tools/knowledge-search";
import { SUPPORTED_EXTENSIONS } from "../../shared/documents/extract-text";
import type { AgentStore } from "../../shared/stores/agent-store";
import { readBody } from "./api-gateway";
import { LOCAL_BUCKET } from "./drop-folder";

const PREFIX = "/_local/knowledge/";

/**
 * The knowledge base's admin view on the local stack, for the playground: there is no admin API in
 * AWS (documents arrive by S3 upload), so these routes live beside the other local stand-ins and
 * act on the same things an operator would there:
 *   GET    /_local/knowledge/documents          every document's row: status, chunks, skip or failure reason
 *   PUT    /_local/knowledge/documents/{name}   the raw body becomes a file of the drop folder (= an S3 upload)
 *   DELETE /_local/knowledge/documents/{name}   removes the file (= an S3 delete)
 *   POST   /_local/knowledge/search {query, limit?}   what search_knowledge_base returns for the query
 * Uploads and deletes go through the drop folder, so ingestion is the real path: the watcher's S3
 * notification, the ingest queue and function.
 */
export class KnowledgeAdmin {
  constructor(private readonly deps: { store: AgentStore; embeddings: Embeddings; dropDir: string }) {}

  /** Serves the request if it is one of these routes; false otherwise. Never rejects. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith(PREFIX)) return false;
    try {
      await this.route(req, res, url.pathname.slice(PREFIX.length));
    } catch (err) {
      if (!res.headersSent) send(res, 500, errorBody("internal_error", (err as Error).message));
    }
    return true;
  }

  private async route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (req.method === "GET" && path === "documents") return send(res, 200, { documents: await this.documents() });
    if (req.method === "POST" && path === "search") {
      const body = parseObject((await readBody(req))?.toString("utf8"));
      const query = typeof body?.query === "string" ? body.query.trim() : "";
      if (!query) return send(res, 400, errorBody("invalid_query", "query is a required, non-empty string"));
      const limit = typeof body?.limit === "number" ? body.limit : undefined;
      return send(res, 200, await this.search(query, limit));
    }
    const m = /^documents\/([^/]+)$/.exec(path);
    if (!m || (req.method !== "PUT" && req.method !== "DELETE"))
      return send(res, 404, errorBody("not_found", `no local knowledge route ${req.method} /${path}`));
    const name = documentName(m[1]!);
    if (!name)
      return send(res, 400, errorBody("invalid_name", "a document name is one file name: no slashes, no leading dot"));
    const file = join(this.deps.dropDir, name);
    if (req.method === "DELETE") {
      if (!existsSync(file))
        return send(res, 404, errorBody("document_not_found", "no such document in the drop folder"));
      rmSync(file);
      return send(res, 204);
    }
    // The drop folder watches these types only: any other file would sit there and never get a status.
    if (!SUPPORTED_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext)))
      return send(
        res,
        400,
        errorBody("unsupported_type", `${name}: the knowledge base takes ${SUPPORTED_EXTENSIONS.join(", ")} files`),
      );
    const body = await readBody(req);
    if (body === undefined) return send(res, 413, errorBody("payload_too_large", "documents are at most 10 MB here"));
    mkdirSync(this.deps.dropDir, { recursive: true });
    writeFileSync(file, body);
    // Accepted, not done: the drop folder's watcher notices the file and the ingest queue takes it.
    send(res, 202, { source: name, bytes: body.length });
  }

  private async documents() {
    const rows = await this.deps.store.listDocuments(LOCAL_BUCKET);
    return (
      rows
        // A removed document keeps a tombstone row (status "deleted"); a first version that was skipped
        // has no applied version either (`deleted`), but its status and reason are what an admin needs.
        .filter((d) => d.status !== "deleted")
        .map((d) => ({
          source: d.source,
          status: d.status,
          chunks: d.chunkCount,
          reason: d.reason,
          updated_at: d.updatedAt,
        }))
        .sort((a, b) => a.source.localeCompare(b.source))
    );
  }

  /** The tool itself runs, so the playground shows exactly the chunks and scores the agent would get. */
  private async search(query: string, limit?: number) {
    return searchKnowledge.run(
      { query, limit: limit === undefined ? undefined : Math.min(10, Math.max(1, Math.trunc(limit))) },
      {
        scope: { userId: "playground", projectId: null, sessionId: null },
        deps: { store: this.deps.store, embeddings: this.deps.embeddings, minMemoryScore: 0 },
      },
    );
  }
}

/** A single file name the drop folder may hold, or undefined: no path can climb out of it. */
export function documentName(raw: string): string | undefined {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  if (!name || name.length > 255 || name.startsWith(".") || /[/\\\0]/.test(name)) return undefined;
  return name;
}

function parseObject(raw: string | undefined): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(raw || "{}") as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const errorBody = (code: string, message: string) => ({ error: { code, message } });

function send(res: ServerResponse, status: number, body?: unknown): void {
  res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
  res.end(body === undefined ? "" : JSON.stringify(body));
}
