import {
  chunkRows,
  DOCUMENT_COLUMNS,
  toChunkPreview,
  iso,
  toDocumentAttempt,
  toDocumentRecord,
  vectorLiteral,
  type AgentStore,
  type DocumentChunk,
  type DocumentVersion,
  type DocumentWriteResult,
  type KnowledgeMatch,
  type KnowledgeQuery,
  type MemoryListFilter,
  type MemoryMatch,
  type MemoryQuery,
  type NewMemory,
  type StoredMemory,
  type StoreItemQuery,
  storeItemArgs,
  type UserContext,
} from "./agent-store";
import type { SqlClient } from "./sql";

// biome-ignore lint/suspicious/noExplicitAny: a SQL row, typed by the mapper that reads it
type Row = Record<string, any>;

const MEMORY_COLUMNS =
  "id, user_id, project_id, content, category, tags, metadata, created_at, updated_at, superseded_by";

/** What a stored memory and a recalled one both show. */
const memoryFields = (r: Row) => ({
  id: r.id,
  content: r.content,
  category: r.category,
  tags: r.tags ?? [],
  metadata: r.metadata ?? {},
  createdAt: iso(r.created_at),
});

export const toStoredMemory = (r: Row): StoredMemory => ({
  ...memoryFields(r),
  userId: r.user_id,
  projectId: r.project_id,
  updatedAt: iso(r.updated_at),
  ...(r.superseded_by ? { supersededBy: String(r.superseded_by) } : {}),
});

export const toMemoryMatch = (r: Row): MemoryMatch => ({ ...memoryFields(r), similarity: Number(r.similarity) });

export const toKnowledgeMatch = (r: Row): KnowledgeMatch => ({
  id: String(r.id),
  documentId: r.document_id,
  source: r.source,
  content: r.content,
  similarity: Number(r.similarity),
});

export const toUserContext = (r: Row): UserContext => ({
  userId: r.user_id,
  plan: r.plan,
  usage: r.usage ?? {},
  preferences: r.preferences ?? {},
  updatedAt: iso(r.updated_at),
});

/** The SQL adapter: PGlite locally and in tests, or any Postgres client. */
export class SqlAgentStore implements AgentStore {
  constructor(private readonly db: SqlClient) {}

  async replaceDocument(v: DocumentVersion, chunks: DocumentChunk[]) {
    const { rows } = await this.db.query<{ result: DocumentWriteResult }>(
      "select replace_document_chunks($1, $2, $3, $4, $5::jsonb) as result",
      [v.documentId, v.source, v.sequencer, v.etag ?? null, JSON.stringify(chunkRows(chunks))],
    );
    return rows[0]!.result;
  }

  async deleteDocument(v: DocumentVersion) {
    const { rows } = await this.db.query<{ result: DocumentWriteResult }>(
      "select delete_document($1, $2, $3) as result",
      [v.documentId, v.source, v.sequencer],
    );
    return rows[0]!.result;
  }

  async beginDocument(v: DocumentVersion) {
    const { rows } = await this.db.query<{ state: string; interrupted: number; reason: string | null }>(
      "select * from begin_document_attempt($1, $2, $3, $4)",
      [v.documentId, v.source, v.sequencer, v.etag ?? null],
    );
    return toDocumentAttempt(rows[0]!);
  }

  async recordDocumentOutcome(v: DocumentVersion, status: "skipped" | "failed", reason: string) {
    await this.db.query("select record_document_outcome($1, $2, $3, $4, $5, $6)", [
      v.documentId,
      v.source,
      v.sequencer,
      v.etag ?? null,
      status,
      reason,
    ]);
  }

  async listDocuments(bucket: string) {
    const { rows } = await this.db.query(
      `select ${DOCUMENT_COLUMNS} from knowledge_documents where starts_with(document_id, $1) order by document_id`,
      [`${bucket}/`],
    );
    return rows.map(toDocumentRecord);
  }

  async recordDocumentFacts(v: DocumentVersion, bytes: number, contentType: string) {
    await this.db.query("select record_document_facts($1, $2, $3, $4)", [
      v.documentId,
      v.sequencer,
      bytes,
      contentType,
    ]);
  }

  async documentChunks(documentId: string) {
    const { rows } = await this.db.query(
      "select chunk_index, metadata, content from knowledge_chunks where document_id = $1 order by chunk_index",
      [documentId],
    );
    return rows.map(toChunkPreview);
  }

  async insertMemory(m: NewMemory) {
    const { rows } = await this.db.query<{ id: string; created: boolean }>(
      "select * from insert_memory($1, $2, $3, $4::vector, $5, $6, $7::jsonb, $8)",
      [
        m.userId,
        m.projectId,
        m.content,
        vectorLiteral(m.embedding),
        m.category ?? null,
        m.tags ?? [],
        JSON.stringify(m.metadata ?? {}),
        m.sourceSessionId ?? null,
      ],
    );
    return rows[0]!;
  }

  async matchMemories(q: MemoryQuery) {
    const { rows } = await this.db.query("select * from match_memories($1::vector, $2, $3, $4, $5, $6)", [
      vectorLiteral(q.embedding),
      q.limit,
      q.userId,
      q.projectId ?? null,
      q.category ?? null,
      q.tags?.length ? q.tags : null,
    ]);
    return rows.map(toMemoryMatch);
  }

  async supersedeMemories(userId: string, oldIds: string[], newId: string) {
    const { rows } = await this.db.query<{ n: number }>("select supersede_memories($1, $2::uuid[], $3) as n", [
      userId,
      oldIds,
      newId,
    ]);
    return rows[0]!.n;
  }

  async listMemories(userId: string, filter: MemoryListFilter) {
    const { rows } = await this.db.query(
      `select ${MEMORY_COLUMNS} from agent_memories
        where user_id = $1 and ($5 or superseded_by is null)
          and ($2::text is null or category = $2)
          and ($3::text is null or tags @> array[$3::text])
        order by created_at desc, id
        limit $4`,
      [userId, filter.category ?? null, filter.tag ?? null, filter.limit, filter.superseded === true],
    );
    return rows.map(toStoredMemory);
  }

  async storeItems(query: StoreItemQuery) {
    const args = Object.values(storeItemArgs(query));
    const { rows } = await this.db.query(
      "select * from agent_store_items($1, $2, $3, $4, $5::jsonb, $6, $7)",
      args.map((v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : v)),
    );
    return rows.map(toStoredMemory);
  }

  async storeProjects(userId: string) {
    const { rows } = await this.db.query<{ project_id: string | null }>("select * from agent_store_projects($1)", [
      userId,
    ]);
    return rows.map((r) => r.project_id);
  }

  async deleteMemory(userId: string, id: string) {
    const { rows } = await this.db.query("delete from agent_memories where id = $1 and user_id = $2 returning id", [
      id,
      userId,
    ]);
    return rows.length > 0;
  }

  async getUserContext(userId: string) {
    const { rows } = await this.db.query(
      "select user_id, plan, usage, preferences, updated_at from user_context where user_id = $1",
      [userId],
    );
    return rows[0] ? toUserContext(rows[0]) : undefined;
  }

  async matchKnowledge(q: KnowledgeQuery) {
    const { rows } = await this.db.query("select * from match_knowledge($1, $2::vector, $3, $4)", [
      q.text,
      vectorLiteral(q.embedding),
      q.limit,
      q.fullTextWeight ?? 1,
    ]);
    return rows.map(toKnowledgeMatch);
  }

  async ping() {
    await this.db.query("select 1");
  }
}
