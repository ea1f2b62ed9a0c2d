/**
 * Long-term memory, user context and the knowledge base (Supabase). One implementation,
 * RpcAgentStore, over either transport (rpc.ts): matching, dedup and scoping live in the
 * migrations' SQL functions, which it calls by name.
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
  /**
   * when the turn it comes from began (ISO): an erased session's tombstone refuses only turns before
   * the erasure, and a memory the user deleted since refuses the fact (InsertedMemory.forgotten)
   */
  turnAt?: string | null;
  /**
   * cosine similarity at or above which the fact is a memory the user deleted since its turn began
   * (the extraction's duplicate threshold); unset: only the same words are
   */
  sameSimilarity?: number | null;
}

/**
 * What storing a memory did: stored it (`created`), found it stored already, or refused it as one
 * the user deleted after the fact's turn began (021_forgotten_memories.sql).
 */
export type InsertedMemory = { id: string; created: boolean; forgotten?: undefined } | ForgottenMemory;
export interface ForgottenMemory {
  id: null;
  created: false;
  forgotten: true;
}

/** What a write naming no turn (NewMemory.turnAt) stored: only a turn's fact can be refused as forgotten. */
export function storedMemory(inserted: InsertedMemory): { id: string; created: boolean } {
  if (inserted.forgotten) throw new Error("a memory naming no turn was refused as forgotten");
  return inserted;
}

export interface MemoryQuery {
  embedding: number[];
  limit: number;
  userId: string;
  /** a project chat sees this project's memories plus the user's memories with no project */
  projectId?: string | null;
  category?: string | null;
  tags?: string[] | null;
  /**
   * Which projects it looks in: "recall" (the default) the project's memories and the user's with
   * no project, as a chat in the project recalls; "exact" the project's alone; "all" every one.
   */
  projectScope?: "recall" | "exact" | "all";
}

/** A memory as every reader sees it. */
export interface MemoryFields {
  id: string;
  content: string;
  category: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
}

export interface MemoryMatch extends MemoryFields {
  similarity: number;
  /** the memory's project, null for none */
  projectId: string | null;
}

export interface StoredMemory extends MemoryScope, MemoryFields {
  updatedAt: string;
  /** the memory that replaced this one, when it was superseded (listed only on request) */
  supersededBy?: string | null;
}

export interface MemoryListFilter {
  category?: string;
  tag?: string;
  limit: number;
  /** also list memories a newer one replaced (kept, never deleted), marked with what replaced them */
  superseded?: boolean;
}

/** Which store items to read (supabase/migrations/011_agent_store_keys.sql). */
export interface StoreItemQuery {
  userId: string;
  /** a namespace's project (null: none); undefined: every project's and none's */
  projectId: string | null | undefined;
  /** the item under this key only (the client's store_key, else the memory's id) */
  key?: string;
  /** each entry equal to the item's content, category or tags */
  filter?: Record<string, unknown>;
  limit: number;
  offset: number;
}

/** agent_store_items' arguments, for both adapters. */
export const storeItemArgs = (q: StoreItemQuery) => ({
  p_user_id: q.userId,
  p_project_id: q.projectId ?? null,
  p_any_project: q.projectId === undefined,
  p_key: q.key ?? null,
  p_filter: q.filter ?? null,
  p_limit: q.limit,
  p_offset: q.offset,
});

/** One item of the Agent Server API's store, as it is put. */
export interface NewStoreItem {
  userId: string;
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  /** the indexed fields' text, embedded; absent: not found by meaning */
  embedding?: number[];
}

export interface StoreItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  /** the similarity to the query, when searched by meaning */
  score?: number;
}

export interface StoreSearch {
  userId: string;
  prefix: string[];
  /** each entry equal to the value's entry under its key */
  filter?: Record<string, unknown>;
  /** by meaning: the query's embedding */
  embedding?: number[];
  limit: number;
  offset: number;
}

export interface NamespaceQuery {
  userId: string;
  prefix: string[];
  suffix: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
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

/**
 * Whether to process a created version (supabase/migrations/008_document_status.sql): "stale"
 * (a newer event is applied or in progress), "skipped" (this version was skipped before, for
 * `reason`), or "begin" with the earlier attempts at it that never finished.
 */
/**
 * What beginning a created version found: a newer event applied (stale), this content skipped
 * before, another delivery of it still within its time (busy: try again later), or go ahead.
 */
export type DocumentAttempt =
  | { state: "stale" }
  | { state: "busy" }
  | { state: "skipped"; reason: string }
  | { state: "begin"; interrupted: number };

export type DocumentStatus = "processing" | "ingested" | "skipped" | "failed" | "deleted";

/** A document's row as an operator sees it: what is applied, and how its latest version ended. */
export interface DocumentRecord {
  documentId: string;
  source: string;
  /** S3 ETag of the applied version (null before one is) */
  etag: string | null;
  deleted: boolean;
  chunkCount: number;
  status: DocumentStatus | null;
  reason: string | null;
  /** ETag of the version the status describes */
  statusEtag: string | null;
  /** S3 sequencer of the last event applied or attempted: orders events on one key */
  sequencer: string | null;
  /** size and content type of the version the status describes, once its processing began */
  bytes: number | null;
  contentType: string | null;
  updatedAt: string;
}

/** One chunk as an admin sees it: where it sits in the document and how it starts. */
export interface DocumentChunkPreview {
  index: number;
  /** the Markdown heading path ("Billing > Refunds"), when the document has headings */
  headings: string | null;
  /** the first characters of its text */
  preview: string;
  chars: number;
}

/** Which page of a bucket's documents (AgentStore.listDocumentsPage). */
export interface DocumentPage {
  bucket: string;
  prefix: string;
  /** the document id the previous page ended on; null for the first */
  after: string | null;
  limit: number;
  /** tombstones too */
  deleted: boolean;
}

export interface AgentStore {
  /** Replaces a document's chunks atomically, unless a newer version is already in. */
  replaceDocument(version: DocumentVersion, chunks: DocumentChunk[]): Promise<DocumentWriteResult>;
  /** Deletes a document's chunks, unless a newer version is already in. */
  deleteDocument(version: DocumentVersion): Promise<DocumentWriteResult>;
  /** Marks a created version as being processed until `until` at the latest (see DocumentAttempt). */
  beginDocument(version: DocumentVersion, until: Date): Promise<DocumentAttempt>;
  /**
   * How a version ended when it did not replace the chunks; a newer version's status is kept. A
   * skip recorded with the version's etag holds for that content; one without, for this event only.
   */
  recordDocumentOutcome(version: DocumentVersion, status: "skipped" | "failed", reason: string): Promise<void>;
  /** Every document of a bucket with its status, by key. */
  listDocuments(bucket: string): Promise<DocumentRecord[]>;
  /**
   * At most `limit` documents of a bucket whose keys start with `prefix`, by document id after
   * `after` (the last one of the previous page), tombstones only with `deleted`.
   */
  listDocumentsPage(page: DocumentPage): Promise<DocumentRecord[]>;
  /** One document with its status, by id (bucket/key); undefined when there is none. */
  getDocument(documentId: string): Promise<DocumentRecord | undefined>;
  /** Size and type of a version whose processing began (shown with its status). */
  recordDocumentFacts(version: DocumentVersion, bytes: number, contentType: string): Promise<void>;
  /** A document's stored chunks, in order, as previews. */
  documentChunks(documentId: string): Promise<DocumentChunkPreview[]>;
  /** Stores a memory, or returns the one already stored for the same fact and scope (or refuses a forgotten one). */
  insertMemory(memory: NewMemory): Promise<InsertedMemory>;
  matchMemories(query: MemoryQuery): Promise<MemoryMatch[]>;
  /** The user's current (not superseded) memories, newest first. */
  listMemories(userId: string, filter: MemoryListFilter): Promise<StoredMemory[]>;
  /** Marks the user's own current memories as replaced by `newId` (kept, never deleted); returns how many. */
  supersedeMemories(userId: string, oldIds: string[], newId: string): Promise<number>;
  /** Deletes one of the user's memories; false when there is none with that id for them. */
  deleteMemory(userId: string, id: string): Promise<boolean>;
  /** The Agent Server API's store items: current memories by namespace, key and filter (agent_store_items). */
  storeItems(query: StoreItemQuery): Promise<StoredMemory[]>;
  /** The projects the user's current memories are in, null for none (agent_store_projects). */
  storeProjects(userId: string): Promise<(string | null)[]>;
  /** The Agent Server API's own store items (any namespace but the memories'): 013_agent_store_items.sql. */
  putItem(item: NewStoreItem): Promise<void>;
  getItem(userId: string, namespace: string[], key: string): Promise<StoreItem | undefined>;
  deleteItem(userId: string, namespace: string[], key: string): Promise<boolean>;
  searchItems(query: StoreSearch): Promise<StoreItem[]>;
  listNamespaces(query: NamespaceQuery): Promise<string[][]>;
  getUserContext(userId: string): Promise<UserContext | undefined>;
  matchKnowledge(query: KnowledgeQuery): Promise<KnowledgeMatch[]>;
  /** One cheap round trip that fails when the database cannot be reached (health checks). */
  ping(): Promise<void>;
}

/** pgvector's text form, as a vector argument takes it (over PostgREST and SQL alike). */
export const vectorLiteral = (embedding: number[]) => `[${embedding.join(",")}]`;

export const iso = (v: Date | string) => new Date(v).toISOString();
