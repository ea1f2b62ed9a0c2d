import {
  iso,
  vectorLiteral,
  type AgentStore,
  type DocumentAttempt,
  type DocumentChunk,
  type DocumentChunkPreview,
  type DocumentRecord,
  type DocumentVersion,
  type DocumentWriteResult,
  type InsertedMemory,
  type KnowledgeMatch,
  type KnowledgeQuery,
  type MemoryListFilter,
  type MemoryMatch,
  type MemoryQuery,
  type NamespaceQuery,
  type NewMemory,
  type NewStoreItem,
  type StoredMemory,
  type StoreItem,
  type StoreItemQuery,
  type StoreSearch,
  storeItemArgs,
  type UserContext,
  type DocumentPage,
} from "./agent-store";
import { allRowsCaller, caller, type Rpc } from "./rpc";

/** Every function the agent store calls, with the argument names it sends (see rpc.ts). */
export const AGENT_STORE_CALLS = {
  replace_document_chunks: ["p_document_id", "p_source", "p_sequencer", "p_etag", "p_chunks"],
  delete_document: ["p_document_id", "p_source", "p_sequencer"],
  begin_document_attempt: ["p_document_id", "p_source", "p_sequencer", "p_etag", "p_until"],
  record_document_outcome: ["p_document_id", "p_source", "p_sequencer", "p_etag", "p_status", "p_reason"],
  list_documents: ["p_bucket"],
  list_documents_page: ["p_bucket", "p_prefix", "p_after", "p_limit", "p_deleted"],
  get_document: ["p_document_id"],
  record_document_facts: ["p_document_id", "p_sequencer", "p_bytes", "p_content_type"],
  document_chunks: ["p_document_id"],
  insert_memory: [
    "p_user_id",
    "p_project_id",
    "p_content",
    "p_embedding",
    "p_category",
    "p_tags",
    "p_metadata",
    "p_source_session_id",
    "p_turn_at",
    "p_same_similarity",
  ],
  match_memories: [
    "query_embedding",
    "match_count",
    "filter_user_id",
    "filter_project_id",
    "filter_category",
    "filter_tags",
  ],
  supersede_memories: ["p_user_id", "p_old_ids", "p_new_id"],
  list_memories: ["p_user_id", "p_limit", "p_category", "p_tag", "p_superseded"],
  delete_memory: ["p_user_id", "p_id"],
  agent_store_items: ["p_user_id", "p_project_id", "p_any_project", "p_key", "p_filter", "p_limit", "p_offset"],
  agent_store_projects: ["p_user_id"],
  store_put_item: ["p_user_id", "p_namespace", "p_key", "p_value", "p_embedding"],
  store_get_item: ["p_user_id", "p_namespace", "p_key"],
  store_delete_item: ["p_user_id", "p_namespace", "p_key"],
  store_search_items: ["p_user_id", "p_prefix", "p_filter", "p_query_embedding", "p_limit", "p_offset"],
  store_list_namespaces: ["p_user_id", "p_prefix", "p_suffix", "p_max_depth", "p_limit", "p_offset"],
  get_user_context: ["p_user_id"],
  match_knowledge: ["query_text", "query_embedding", "match_count", "full_text_weight"],
  ping: [],
} as const;

// biome-ignore lint/suspicious/noExplicitAny: a row of a function's JSON result, typed by the mapper that reads it
type Row = Record<string, any>;

/** A set-returning function's result (rpc.ts): its rows. */
const rows = (result: unknown) => result as Row[];

/** How many characters of a chunk an admin's preview shows. */
export const CHUNK_PREVIEW_CHARS = 160;

/** What a stored memory and a recalled one both show. */
const memoryFields = (r: Row) => ({
  id: r.id,
  content: r.content,
  category: r.category,
  tags: r.tags ?? [],
  metadata: r.metadata ?? {},
  createdAt: iso(r.created_at),
});

const toStoredMemory = (r: Row): StoredMemory => ({
  ...memoryFields(r),
  userId: r.user_id,
  projectId: r.project_id,
  updatedAt: iso(r.updated_at),
  ...(r.superseded_by ? { supersededBy: String(r.superseded_by) } : {}),
});

const toMemoryMatch = (r: Row): MemoryMatch => ({
  ...memoryFields(r),
  similarity: Number(r.similarity),
  projectId: r.project_id ?? null,
});

const toKnowledgeMatch = (r: Row): KnowledgeMatch => ({
  id: String(r.id),
  documentId: r.document_id,
  source: r.source,
  content: r.content,
  similarity: Number(r.similarity),
});

const toUserContext = (r: Row): UserContext => ({
  userId: r.user_id,
  plan: r.plan,
  usage: r.usage ?? {},
  preferences: r.preferences ?? {},
  updatedAt: iso(r.updated_at),
});

const toDocumentRecord = (r: Row): DocumentRecord => ({
  documentId: r.document_id,
  source: r.source,
  etag: r.etag ?? null,
  deleted: r.deleted,
  chunkCount: r.chunk_count,
  status: r.status ?? null,
  reason: r.reason ?? null,
  statusEtag: r.status_etag ?? null,
  sequencer: r.status_sequencer ?? (r.sequencer || null),
  bytes: r.bytes == null ? null : Number(r.bytes),
  contentType: r.content_type ?? null,
  updatedAt: iso(r.status_at ?? r.updated_at),
});

const toChunkPreview = (r: Row): DocumentChunkPreview => ({
  index: r.chunk_index,
  headings: r.metadata?.headings ?? null,
  preview: [...String(r.content)].slice(0, CHUNK_PREVIEW_CHARS).join(""),
  chars: [...String(r.content)].length,
});

/** begin_document_attempt's row as a DocumentAttempt. */
const toDocumentAttempt = (r: Row): DocumentAttempt =>
  r.state === "stale" || r.state === "busy"
    ? { state: r.state }
    : r.state === "skipped"
      ? { state: "skipped", reason: r.reason ?? "skipped before" }
      : { state: "begin", interrupted: r.interrupted };

/** The chunk rows replace_document_chunks takes, embeddings in pgvector's text form. */
const chunkRows = (chunks: DocumentChunk[]) =>
  chunks.map((c) => ({
    chunk_index: c.index,
    content: c.content,
    metadata: c.metadata,
    embedding: vectorLiteral(c.embedding),
  }));

/** The arguments naming a document version, as every document function takes them. */
const versionArgs = (v: DocumentVersion) => ({
  p_document_id: v.documentId,
  p_source: v.source,
  p_sequencer: v.sequencer,
});

/** The agent store over either transport: PostgREST in Lambda, SQL on PGlite locally and in tests. */
export class RpcAgentStore implements AgentStore {
  private readonly call;
  private readonly allRows;

  constructor(rpc: Rpc) {
    this.call = caller(rpc, AGENT_STORE_CALLS);
    this.allRows = allRowsCaller(rpc, AGENT_STORE_CALLS);
  }

  async replaceDocument(v: DocumentVersion, chunks: DocumentChunk[]) {
    return (await this.call("replace_document_chunks", {
      ...versionArgs(v),
      p_etag: v.etag ?? null,
      p_chunks: chunkRows(chunks),
    })) as DocumentWriteResult;
  }

  async deleteDocument(v: DocumentVersion) {
    return (await this.call("delete_document", versionArgs(v))) as DocumentWriteResult;
  }

  async beginDocument(v: DocumentVersion, until: Date) {
    const [row] = rows(
      await this.call("begin_document_attempt", {
        ...versionArgs(v),
        p_etag: v.etag ?? null,
        p_until: until.toISOString(),
      }),
    );
    return toDocumentAttempt(row!);
  }

  async recordDocumentOutcome(v: DocumentVersion, status: "skipped" | "failed", reason: string) {
    await this.call("record_document_outcome", {
      ...versionArgs(v),
      p_etag: v.etag ?? null,
      p_status: status,
      p_reason: reason,
    });
  }

  async getDocument(documentId: string) {
    const [row] = rows(await this.call("get_document", { p_document_id: documentId }));
    return row && toDocumentRecord(row);
  }

  async listDocuments(bucket: string) {
    return rows(await this.allRows("list_documents", { p_bucket: bucket }, "document_id")).map(toDocumentRecord);
  }

  async listDocumentsPage(page: DocumentPage) {
    const found = await this.call("list_documents_page", {
      p_bucket: page.bucket,
      p_prefix: page.prefix,
      p_after: page.after,
      p_limit: page.limit,
      p_deleted: page.deleted,
    });
    return rows(found).map(toDocumentRecord);
  }

  async recordDocumentFacts(v: DocumentVersion, bytes: number, contentType: string) {
    await this.call("record_document_facts", {
      p_document_id: v.documentId,
      p_sequencer: v.sequencer,
      p_bytes: bytes,
      p_content_type: contentType,
    });
  }

  async documentChunks(documentId: string) {
    return rows(await this.allRows("document_chunks", { p_document_id: documentId }, "chunk_index")).map(
      toChunkPreview,
    );
  }

  async insertMemory(m: NewMemory): Promise<InsertedMemory> {
    const [row] = rows(
      await this.call("insert_memory", {
        p_user_id: m.userId,
        p_project_id: m.projectId,
        p_content: m.content,
        p_embedding: vectorLiteral(m.embedding),
        p_category: m.category ?? null,
        p_tags: m.tags ?? [],
        p_metadata: m.metadata ?? {},
        p_source_session_id: m.sourceSessionId ?? null,
        p_turn_at: m.turnAt ?? null,
        p_same_similarity: m.sameSimilarity ?? null,
      }),
    );
    if (!row) throw new Error("insert_memory answered no row");
    // No id: the user deleted the memory after the fact's turn began.
    if (row.id === null) return { id: null, created: false, forgotten: true };
    return { id: String(row.id), created: Boolean(row.created) };
  }

  async matchMemories(q: MemoryQuery) {
    const found = rows(
      await this.call("match_memories", {
        query_embedding: vectorLiteral(q.embedding),
        match_count: q.limit,
        filter_user_id: q.userId,
        filter_project_id: q.projectId ?? null,
        filter_category: q.category ?? null,
        filter_tags: q.tags?.length ? q.tags : null,
        ...(q.projectScope ? { project_scope: q.projectScope } : {}),
      }),
    );
    return found.map(toMemoryMatch);
  }

  async supersedeMemories(userId: string, oldIds: string[], newId: string) {
    return (await this.call("supersede_memories", {
      p_user_id: userId,
      p_old_ids: oldIds,
      p_new_id: newId,
    })) as number;
  }

  async listMemories(userId: string, filter: MemoryListFilter) {
    const found = rows(
      await this.call("list_memories", {
        p_user_id: userId,
        p_limit: filter.limit,
        p_category: filter.category ?? null,
        p_tag: filter.tag ?? null,
        p_superseded: filter.superseded === true,
      }),
    );
    return found.map(toStoredMemory);
  }

  async deleteMemory(userId: string, id: string) {
    return (await this.call("delete_memory", { p_user_id: userId, p_id: id })) === true;
  }

  async storeItems(query: StoreItemQuery) {
    return rows(await this.call("agent_store_items", storeItemArgs(query))).map(toStoredMemory);
  }

  async storeProjects(userId: string) {
    return (await this.call("agent_store_projects", { p_user_id: userId })) as (string | null)[];
  }

  async putItem(item: NewStoreItem) {
    await this.call("store_put_item", {
      p_user_id: item.userId,
      p_namespace: item.namespace,
      p_key: item.key,
      p_value: item.value,
      p_embedding: item.embedding ? vectorLiteral(item.embedding) : null,
    });
  }

  async getItem(userId: string, namespace: string[], key: string) {
    const [row] = rows(await this.call("store_get_item", { p_user_id: userId, p_namespace: namespace, p_key: key }));
    return row ? toStoreItem(row) : undefined;
  }

  async deleteItem(userId: string, namespace: string[], key: string) {
    return (await this.call("store_delete_item", { p_user_id: userId, p_namespace: namespace, p_key: key })) === true;
  }

  async searchItems(q: StoreSearch) {
    const found = rows(
      await this.call("store_search_items", {
        p_user_id: q.userId,
        p_prefix: q.prefix,
        p_filter: q.filter ?? null,
        p_query_embedding: q.embedding ? vectorLiteral(q.embedding) : null,
        p_limit: q.limit,
        p_offset: q.offset,
      }),
    );
    return found.map(toStoreItem);
  }

  async listNamespaces(q: NamespaceQuery) {
    return (await this.call("store_list_namespaces", {
      p_user_id: q.userId,
      p_prefix: q.prefix,
      p_suffix: q.suffix,
      p_max_depth: q.maxDepth ?? null,
      p_limit: q.limit,
      p_offset: q.offset,
    })) as string[][];
  }

  async getUserContext(userId: string) {
    const [row] = rows(await this.call("get_user_context", { p_user_id: userId }));
    return row ? toUserContext(row) : undefined;
  }

  async matchKnowledge(q: KnowledgeQuery) {
    const found = rows(
      await this.call("match_knowledge", {
        query_text: q.text,
        query_embedding: vectorLiteral(q.embedding),
        match_count: q.limit,
        full_text_weight: q.fullTextWeight ?? 1,
      }),
    );
    return found.map(toKnowledgeMatch);
  }

  async ping() {
    await this.call("ping", {});
  }
}

const toStoreItem = (r: Record<string, unknown>): StoreItem => ({
  namespace: r.namespace as string[],
  key: String(r.key),
  value: r.value as Record<string, unknown>,
  createdAt: iso(r.created_at as string),
  updatedAt: iso(r.updated_at as string),
  ...(r.score === null || r.score === undefined ? {} : { score: Number(r.score) }),
});
