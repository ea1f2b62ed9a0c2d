import type { PostgrestClient } from "@supabase/postgrest-js";
import { rpc, unwrap } from "./postgrest";
import {
  chunkRows,
  DOCUMENT_COLUMNS,
  toChunkPreview,
  toDocumentAttempt,
  toDocumentRecord,
  vectorLiteral,
  type AgentStore,
  type DocumentChunk,
  type DocumentVersion,
  type DocumentWriteResult,
  type KnowledgeQuery,
  type MemoryListFilter,
  type MemoryQuery,
  type NewMemory,
  type StoreItemQuery,
  storeItemArgs,
} from "./agent-store";
import { toKnowledgeMatch, toMemoryMatch, toStoredMemory, toUserContext } from "./sql-agent-store";

const MEMORY_COLUMNS = "id,user_id,project_id,content,category,tags,metadata,created_at,updated_at,superseded_by";

/** The arguments naming a document version, as every document function takes them. */
const versionArgs = (v: DocumentVersion) => ({
  p_document_id: v.documentId,
  p_source: v.source,
  p_sequencer: v.sequencer,
});

/** The Supabase adapter: the same tables and SQL functions, over PostgREST. */
export class PostgrestAgentStore implements AgentStore {
  constructor(private readonly rest: PostgrestClient) {}

  async replaceDocument(v: DocumentVersion, chunks: DocumentChunk[]) {
    return rpc<DocumentWriteResult>(this.rest, "replace_document_chunks", {
      ...versionArgs(v),
      p_etag: v.etag ?? null,
      p_chunks: chunkRows(chunks),
    });
  }

  async deleteDocument(v: DocumentVersion) {
    return rpc<DocumentWriteResult>(this.rest, "delete_document", versionArgs(v));
  }

  async beginDocument(v: DocumentVersion) {
    const rows = await rpc<{ state: string; interrupted: number; reason: string | null }[]>(
      this.rest,
      "begin_document_attempt",
      {
        ...versionArgs(v),
        p_etag: v.etag ?? null,
      },
    );
    return toDocumentAttempt(rows[0]!);
  }

  async recordDocumentOutcome(v: DocumentVersion, status: "skipped" | "failed", reason: string) {
    await rpc(this.rest, "record_document_outcome", {
      ...versionArgs(v),
      p_etag: v.etag ?? null,
      p_status: status,
      p_reason: reason,
    });
  }

  async listDocuments(bucket: string) {
    // PostgREST's like takes * as its wildcard; bucket names cannot contain one.
    const rows = unwrap<Record<string, unknown>[]>(
      "knowledge_documents",
      await this.rest
        .from("knowledge_documents")
        .select(DOCUMENT_COLUMNS)
        .like("document_id", `${bucket}/*`)
        .order("document_id"),
    );
    return rows.map(toDocumentRecord);
  }

  async recordDocumentFacts(v: DocumentVersion, bytes: number, contentType: string) {
    await rpc(this.rest, "record_document_facts", {
      p_document_id: v.documentId,
      p_sequencer: v.sequencer,
      p_bytes: bytes,
      p_content_type: contentType,
    });
  }

  async documentChunks(documentId: string) {
    const rows = unwrap<Record<string, unknown>[]>(
      "knowledge_chunks",
      await this.rest
        .from("knowledge_chunks")
        .select("chunk_index,metadata,content")
        .eq("document_id", documentId)
        .order("chunk_index"),
    );
    return rows.map(toChunkPreview);
  }

  async insertMemory(m: NewMemory) {
    const rows = await rpc<{ id: string; created: boolean }[]>(this.rest, "insert_memory", {
      p_user_id: m.userId,
      p_project_id: m.projectId,
      p_content: m.content,
      p_embedding: vectorLiteral(m.embedding),
      p_category: m.category ?? null,
      p_tags: m.tags ?? [],
      p_metadata: m.metadata ?? {},
      p_source_session_id: m.sourceSessionId ?? null,
    });
    return rows[0]!;
  }

  async matchMemories(q: MemoryQuery) {
    const rows = await rpc<Record<string, unknown>[]>(this.rest, "match_memories", {
      query_embedding: vectorLiteral(q.embedding),
      match_count: q.limit,
      filter_user_id: q.userId,
      filter_project_id: q.projectId ?? null,
      filter_category: q.category ?? null,
      filter_tags: q.tags?.length ? q.tags : null,
    });
    return rows.map(toMemoryMatch);
  }

  async supersedeMemories(userId: string, oldIds: string[], newId: string) {
    return rpc<number>(this.rest, "supersede_memories", { p_user_id: userId, p_old_ids: oldIds, p_new_id: newId });
  }

  async listMemories(userId: string, filter: MemoryListFilter) {
    let query = this.rest.from("agent_memories").select(MEMORY_COLUMNS).eq("user_id", userId);
    if (!filter.superseded) query = query.is("superseded_by", null);
    if (filter.category) query = query.eq("category", filter.category);
    if (filter.tag) query = query.contains("tags", [filter.tag]);
    const rows = unwrap<Record<string, unknown>[]>(
      "list memories",
      await query.order("created_at", { ascending: false }).order("id").limit(filter.limit),
    );
    return rows.map(toStoredMemory);
  }

  async storeItems(query: StoreItemQuery) {
    const rows = await rpc<Record<string, unknown>[]>(this.rest, "agent_store_items", storeItemArgs(query));
    return rows.map(toStoredMemory);
  }

  async storeProjects(userId: string) {
    const rows = await rpc<{ project_id: string | null }[]>(this.rest, "agent_store_projects", { p_user_id: userId });
    return rows.map((r) => r.project_id);
  }

  async deleteMemory(userId: string, id: string) {
    const rows = unwrap<unknown[]>(
      "delete memory",
      await this.rest.from("agent_memories").delete().eq("id", id).eq("user_id", userId).select("id"),
    );
    return rows.length > 0;
  }

  async getUserContext(userId: string) {
    const row = unwrap<Record<string, unknown> | null>(
      "user_context",
      await this.rest
        .from("user_context")
        .select("user_id,plan,usage,preferences,updated_at")
        .eq("user_id", userId)
        .maybeSingle(),
    );
    return row ? toUserContext(row) : undefined;
  }

  async matchKnowledge(q: KnowledgeQuery) {
    const rows = await rpc<Record<string, unknown>[]>(this.rest, "match_knowledge", {
      query_text: q.text,
      query_embedding: vectorLiteral(q.embedding),
      match_count: q.limit,
      full_text_weight: q.fullTextWeight ?? 1,
    });
    return rows.map(toKnowledgeMatch);
  }

  async ping() {
    // A head request on a small table: PostgREST answers it without sending rows.
    unwrap("ping", await this.rest.from("knowledge_documents").select("document_id", { head: true }).limit(1));
  }
}
