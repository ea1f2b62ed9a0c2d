import type { PostgrestClient } from "@supabase/postgrest-js";
import { unwrap } from "./postgrest";
import {
  chunkRows,
  DOCUMENT_COLUMNS,
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
} from "./agent-store";
import { toKnowledgeMatch, toMemoryMatch, toStoredMemory, toUserContext } from "./sql-agent-store";

const MEMORY_COLUMNS = "id,user_id,project_id,content,category,tags,metadata,created_at,updated_at";

/** The Supabase adapter: the same tables and SQL functions, over PostgREST. */
export class PostgrestAgentStore implements AgentStore {
  constructor(private readonly rest: PostgrestClient) {}

  async replaceDocument(v: DocumentVersion, chunks: DocumentChunk[]) {
    return unwrap<DocumentWriteResult>(
      "replace_document_chunks",
      await this.rest.rpc("replace_document_chunks", {
        p_document_id: v.documentId,
        p_source: v.source,
        p_sequencer: v.sequencer,
        p_etag: v.etag ?? null,
        p_chunks: chunkRows(chunks),
      }),
    );
  }

  async deleteDocument(v: DocumentVersion) {
    return unwrap<DocumentWriteResult>(
      "delete_document",
      await this.rest.rpc("delete_document", {
        p_document_id: v.documentId,
        p_source: v.source,
        p_sequencer: v.sequencer,
      }),
    );
  }

  async beginDocument(v: DocumentVersion) {
    const rows = unwrap<{ state: string; interrupted: number; reason: string | null }[]>(
      "begin_document_attempt",
      await this.rest.rpc("begin_document_attempt", {
        p_document_id: v.documentId,
        p_source: v.source,
        p_sequencer: v.sequencer,
        p_etag: v.etag ?? null,
      }),
    );
    return toDocumentAttempt(rows[0]!);
  }

  async recordDocumentOutcome(v: DocumentVersion, status: "skipped" | "failed", reason: string) {
    unwrap(
      "record_document_outcome",
      await this.rest.rpc("record_document_outcome", {
        p_document_id: v.documentId,
        p_source: v.source,
        p_sequencer: v.sequencer,
        p_etag: v.etag ?? null,
        p_status: status,
        p_reason: reason,
      }),
    );
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

  async insertMemory(m: NewMemory) {
    const rows = unwrap<{ id: string; created: boolean }[]>(
      "insert_memory",
      await this.rest.rpc("insert_memory", {
        p_user_id: m.userId,
        p_project_id: m.projectId,
        p_content: m.content,
        p_embedding: vectorLiteral(m.embedding),
        p_category: m.category ?? null,
        p_tags: m.tags ?? [],
        p_metadata: m.metadata ?? {},
        p_source_session_id: m.sourceSessionId ?? null,
      }),
    );
    return rows[0]!;
  }

  async matchMemories(q: MemoryQuery) {
    const rows = unwrap<Record<string, unknown>[]>(
      "match_memories",
      await this.rest.rpc("match_memories", {
        query_embedding: vectorLiteral(q.embedding),
        match_count: q.limit,
        filter_user_id: q.userId,
        filter_project_id: q.projectId ?? null,
        filter_category: q.category ?? null,
        filter_tags: q.tags?.length ? q.tags : null,
      }),
    );
    return rows.map(toMemoryMatch);
  }

  async supersedeMemories(userId: string, oldIds: string[], newId: string) {
    return unwrap<number>(
      "supersede_memories",
      await this.rest.rpc("supersede_memories", { p_user_id: userId, p_old_ids: oldIds, p_new_id: newId }),
    );
  }

  async listMemories(userId: string, filter: MemoryListFilter) {
    let query = this.rest.from("agent_memories").select(MEMORY_COLUMNS).eq("user_id", userId).is("superseded_by", null);
    if (filter.category) query = query.eq("category", filter.category);
    if (filter.tag) query = query.contains("tags", [filter.tag]);
    const rows = unwrap<Record<string, unknown>[]>(
      "list memories",
      await query.order("created_at", { ascending: false }).order("id").limit(filter.limit),
    );
    return rows.map(toStoredMemory);
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
    const rows = unwrap<Record<string, unknown>[]>(
      "match_knowledge",
      await this.rest.rpc("match_knowledge", {
        query_text: q.text,
        query_embedding: vectorLiteral(q.embedding),
        match_count: q.limit,
        full_text_weight: q.fullTextWeight ?? 1,
      }),
    );
    return rows.map(toKnowledgeMatch);
  }

  async ping() {
    // A head request on a small table: PostgREST answers it without sending rows.
    unwrap("ping", await this.rest.from("knowledge_documents").select("document_id", { head: true }).limit(1));
  }
}
