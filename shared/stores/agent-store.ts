/**
 * Long-term memory, user context and the knowledge base (Supabase). Two adapters:
 * SQL (PGlite locally and in tests) and PostgREST (Lambda). Matching, dedup and scoping
 * live in the migrations' SQL functions, which both adapters call.
 */

/** Who a memory belongs to: null user = global, null project = no project. */
export interface MemoryScope {
  userId: string | null;
  projectId: string | null;
}

export interface NewMemory extends MemoryScope {
  content: string;
  embedding: number[];
  category?: string | null;
  tags?: string[];
  metadata?: Record<string, unknown>;
  sourceSessionId?: string | null;
}

export interface MemoryQuery {
  embedding: number[];
  limit: number;
  userId: string;
  /** a project chat sees this project's memories plus the user's memories with no project */
  projectId?: string | null;
  category?: string | null;
  tags?: string[] | null;
}

export interface MemoryMatch {
  id: string;
  content: string;
  category: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
  similarity: number;
}

export interface StoredMemory extends MemoryScope {
  id: string;
  content: string;
  category: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryListFilter {
  category?: string;
  tag?: string;
  limit: number;
}

export interface UserContext {
  userId: string;
  plan: string | null;
  usage: Record<string, unknown>;
  preferences: Record<string, unknown>;
  updatedAt: string;
}

export interface KnowledgeMatch {
  id: string;
  documentId: string;
  source: string;
  content: string;
  /** the fused reciprocal-rank score */
  similarity: number;
}

export interface KnowledgeQuery {
  text: string;
  embedding: number[];
  limit: number;
  /** 0 turns off the full-text side: vector-only ranking */
  fullTextWeight?: number;
}

export interface DocumentChunk {
  index: number;
  content: string;
  metadata: Record<string, unknown>;
  embedding: number[];
}

export interface DocumentVersion {
  /** bucket/key */
  documentId: string;
  /** the key, shown as the source */
  source: string;
  /** S3's sequencer for this key's event: orders events, newest wins */
  sequencer: string;
  etag?: string | null;
}

/** "stale": an event as new or newer was already applied, so this one changed nothing. */
export type DocumentWriteResult = "replaced" | "deleted" | "stale";

export interface AgentStore {
  /** Replaces a document's chunks atomically, unless a newer version is already in. */
  replaceDocument(version: DocumentVersion, chunks: DocumentChunk[]): Promise<DocumentWriteResult>;
  /** Deletes a document's chunks, unless a newer version is already in. */
  deleteDocument(version: DocumentVersion): Promise<DocumentWriteResult>;
  /** Stores a memory, or returns the one already stored for the same fact and scope. */
  insertMemory(memory: NewMemory): Promise<{ id: string; created: boolean }>;
  matchMemories(query: MemoryQuery): Promise<MemoryMatch[]>;
  /** The user's current (not superseded) memories, newest first. */
  listMemories(userId: string, filter: MemoryListFilter): Promise<StoredMemory[]>;
  /** Marks the user's own current memories as replaced by `newId` (kept, never deleted); returns how many. */
  supersedeMemories(userId: string, oldIds: string[], newId: string): Promise<number>;
  /** Deletes one of the user's memories; false when there is none with that id for them. */
  deleteMemory(userId: string, id: string): Promise<boolean>;
  getUserContext(userId: string): Promise<UserContext | undefined>;
  matchKnowledge(query: KnowledgeQuery): Promise<KnowledgeMatch[]>;
  /** One cheap round trip that fails when the database cannot be reached (health checks). */
  ping(): Promise<void>;
}

/** pgvector's text form, accepted by both a `::vector` cast and PostgREST. */
export const vectorLiteral = (embedding: number[]) => `[${embedding.join(",")}]`;

export const iso = (v: Date | string) => new Date(v).toISOString();

/** The chunk rows replace_document_chunks takes, embeddings in pgvector's text form. */
export const chunkRows = (chunks: DocumentChunk[]) =>
  chunks.map((c) => ({
    chunk_index: c.index,
    content: c.content,
    metadata: c.metadata,
    embedding: vectorLiteral(c.embedding),
  }));
