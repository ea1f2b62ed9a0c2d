import type { Embeddings } from "@langchain/core/embeddings";
import * as z from "zod";
import { AppError, forbidden, notFound } from "../../shared/errors";
import type { AgentStore, StoredMemory } from "../../shared/stores/agent-store";
import { storable } from "../../shared/text";

/**
 * The Agent Server API's store, mapped onto the caller's long-term memories: namespace
 * `["memories", <user>]` holds the memories with no project, `["memories", <user>, <project>]`
 * a project's. An item's value is `{content, category?, tags?}`; its key is the client's
 * (kept in the memory's metadata) or, for memories the agent saved, the memory's id. A user
 * reaches only namespaces naming themselves. Items are the same rows /api/memories lists and the
 * agent recalls, so a memory put here is one the agent knows.
 */
const ROOT = "memories";
/** How many of the caller's memories a key lookup reads (listMemories, newest first). */
const LOOKUP_LIMIT = 200;

const label = storable(z.string().min(1).max(128));
export const Namespace = z.array(label).min(1).max(3);
export const ItemValue = z
  .object({
    content: storable(z.string().trim().min(1).max(2000)),
    category: storable(z.string().trim().min(1).max(64)).nullish(),
    tags: z
      .array(storable(z.string().max(64)))
      .max(10)
      .optional(),
  })
  .loose();
export const PutItem = z.object({ namespace: Namespace, key: label, value: ItemValue });
export const ItemKey = z.object({ namespace: Namespace, key: label });
export const SearchItems = z.object({
  namespace_prefix: z.array(label).max(3).default([]),
  filter: z.record(z.string(), z.unknown()).nullish(),
  query: storable(z.string().max(2000)).nullish(),
  limit: z.number().int().min(1).max(100).default(10),
  offset: z.number().int().min(0).default(0),
});
export const ListNamespaces = z.object({
  prefix: z.array(label).max(3).nullish(),
  max_depth: z.number().int().min(1).nullish(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});

interface Scope {
  userId: string;
  projectId: string | null;
}

const keyOf = (m: StoredMemory) => (typeof m.metadata.store_key === "string" ? m.metadata.store_key : m.id);
const namespaceOf = (userId: string, projectId: string | null) =>
  projectId === null ? [ROOT, userId] : [ROOT, userId, projectId];

function itemOf(
  m: {
    id: string;
    content: string;
    category: string | null;
    tags: string[];
    metadata: Record<string, unknown>;
    createdAt: string;
    updatedAt?: string;
  },
  namespace: string[],
  score?: number,
) {
  return {
    namespace,
    key: keyOf(m as StoredMemory),
    value: { content: m.content, category: m.category, tags: m.tags },
    created_at: m.createdAt,
    updated_at: m.updatedAt ?? m.createdAt,
    ...(score === undefined ? {} : { score }),
  };
}

export class MemoryItems {
  constructor(
    private readonly store: AgentStore | undefined,
    private readonly embeddings: Embeddings,
  ) {}

  /** The memories scope a namespace names: only the caller's own. */
  private scope(userId: string, namespace: string[]): Scope {
    if (namespace[0] !== ROOT || namespace.length < 2)
      throw notFound("namespace_not_found", 'namespaces are ["memories", <your user id>, <project id>?]');
    if (namespace[1] !== userId) throw forbidden("a namespace may name only its caller's own memories");
    return { userId, projectId: namespace[2] ?? null };
  }

  private memories(): AgentStore {
    if (!this.store) throw new AppError(503, "memory_unavailable", "the store needs Supabase, which is not configured");
    return this.store;
  }

  private async find(scope: Scope, key: string): Promise<StoredMemory | undefined> {
    const all = await this.memories().listMemories(scope.userId, { limit: LOOKUP_LIMIT });
    return all.find((m) => m.projectId === scope.projectId && keyOf(m) === key);
  }

  /** Puts an item: a new memory, which replaces (supersedes) the one that had this key. */
  async put(userId: string, body: z.infer<typeof PutItem>): Promise<void> {
    const scope = this.scope(userId, body.namespace);
    const previous = await this.find(scope, body.key);
    const [embedding] = await this.embeddings.embedDocuments([body.value.content]);
    const { id } = await this.memories().insertMemory({
      ...scope,
      content: body.value.content,
      embedding: embedding!,
      category: body.value.category ?? null,
      tags: body.value.tags ?? [],
      metadata: { store_key: body.key, addedAt: new Date().toISOString() },
    });
    if (previous && previous.id !== id) await this.memories().supersedeMemories(userId, [previous.id], id);
  }

  async get(userId: string, namespace: string[], key: string) {
    const scope = this.scope(userId, namespace);
    const found = await this.find(scope, key);
    if (!found) throw notFound("item_not_found", "no such item");
    return itemOf(found, namespaceOf(scope.userId, scope.projectId));
  }

  async delete(userId: string, namespace: string[], key: string): Promise<void> {
    const scope = this.scope(userId, namespace);
    const found = await this.find(scope, key);
    if (found) await this.memories().deleteMemory(userId, found.id);
  }

  /** Items under a prefix; with `query`, by similarity (the same match the agent's recall uses). */
  async search(userId: string, body: z.infer<typeof SearchItems>) {
    const prefix = body.namespace_prefix;
    if (prefix.length > 0 && prefix[0] !== ROOT) return { items: [] };
    if (prefix.length > 1 && prefix[1] !== userId)
      throw forbidden("a namespace may name only its caller's own memories");
    const projectId = prefix[2];
    const wanted = (m: { category: string | null; tags: string[]; content: string }) =>
      Object.entries(body.filter ?? {}).every(
        ([k, v]) =>
          JSON.stringify(({ content: m.content, category: m.category, tags: m.tags } as Record<string, unknown>)[k]) ===
          JSON.stringify(v),
      );
    if (body.query) {
      const embedding = await this.embeddings.embedQuery(body.query);
      const matches = await this.memories().matchMemories({
        embedding,
        userId,
        projectId: projectId ?? null,
        limit: body.offset + body.limit,
      });
      const ns = namespaceOf(userId, projectId ?? null);
      return {
        items: matches
          .filter(wanted)
          .slice(body.offset)
          .map((m) => itemOf(m, ns, m.similarity)),
      };
    }
    const all = await this.memories().listMemories(userId, { limit: LOOKUP_LIMIT });
    return {
      items: all
        .filter((m) => projectId === undefined || m.projectId === projectId)
        .filter(wanted)
        .slice(body.offset, body.offset + body.limit)
        .map((m) => itemOf(m, namespaceOf(userId, m.projectId))),
    };
  }

  async namespaces(userId: string, body: z.infer<typeof ListNamespaces>) {
    const all = await this.memories().listMemories(userId, { limit: LOOKUP_LIMIT });
    const seen = new Map<string, string[]>();
    for (const m of all) {
      const ns = namespaceOf(userId, m.projectId).slice(0, body.max_depth ?? 3);
      seen.set(JSON.stringify(ns), ns);
    }
    const prefix = body.prefix ?? [];
    return {
      namespaces: [...seen.values()]
        .filter((ns) => prefix.every((p, i) => ns[i] === p))
        .slice(body.offset, body.offset + body.limit),
    };
  }
}
