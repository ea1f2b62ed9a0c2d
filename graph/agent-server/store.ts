import type { Embeddings } from "@langchain/core/embeddings";
import * as z from "../../shared/zod";
import { AppError, badRequest, notFound } from "../../shared/errors";
import { type AgentStore, type StoredMemory, storedMemory } from "../../shared/stores/agent-store";
import { storableJson } from "../../shared/storable-json";
import { storableText } from "../../shared/text";
import { isDeepStrictEqual } from "node:util";

/**
 * The Agent Server API's store, mapped onto the caller's long-term memories: namespace
 * `["memories", <user>]` holds the memories with no project, `["memories", <user>, <project>]`
 * a project's. An item's value is `{content, category?, tags?}`; its key is the client's
 * (kept in the memory's metadata) or, for memories the agent saved, the memory's id. A user
 * reaches only namespaces naming themselves: any other is 404, as if it did not exist. Items are
 * the same rows /api/memories lists and the agent recalls, so a memory put here is one the agent
 * knows. Every lookup is answered by the database over all of the user's memories
 * (supabase/migrations/011_agent_store_keys.sql), never from a window of the newest.
 *
 * The SDK refuses a namespace label holding a period (it joins labels with them in a query
 * string), so a user id holding one is written in namespaces with its periods as %2E (and its
 * percent signs as %25): userLabel. Either spelling names the caller.
 */
export const ROOT = "memories";

const label = storableText({ min: 1, max: 128 });
// The store routes' schemas are built when first parsed (z.lazy), like requests.ts's.
export const Namespace = z.lazy(() => z.array(label).check(z.minLength(1), z.maxLength(10)));
/** A memory, as an item's value in the memories namespace. */
export const ItemValue = z.lazy(() =>
  z.strictObject({
    content: storableText({ min: 1, max: 2000, trim: true }),
    category: z.nullish(storableText({ min: 1, max: 64, trim: true })),
    tags: z.optional(z.array(storableText({ max: 64 })).check(z.maxLength(10))),
  }),
);
/** Which of a value's fields are embedded for search by meaning: paths ("$" the whole value), or none. */
const Index = z.lazy(() =>
  z.union([z.literal(false), z.array(storableText({ min: 1, max: 256 })).check(z.maxLength(16))]),
);
export const PutItem = z.lazy(() =>
  z.object({
    namespace: Namespace,
    key: label,
    // Any JSON object, as LangGraph's store holds them.
    value: storableJson(z.record(z.string(), z.unknown()), { maxBytes: 256 * 1024 }),
    index: z.nullish(Index),
    ttl: z.optional(z.null({ error: "this store keeps items until they are deleted: send no ttl" })),
  }),
);
export const ItemKey = z.lazy(() => z.object({ namespace: Namespace, key: label }));
/** GET /store/items: the namespace's labels joined by periods, as the SDK sends them. */
export const ItemQuery = z.lazy(() =>
  z.looseObject({
    namespace: storableText({ min: 1, max: 10 * 129 }),
    key: label,
    refresh_ttl: z.optional(z.enum(["true", "false"])),
  }),
);
/** The first `$`-named key inside a filter's values (LangGraph's operators are spelled so). */
function operatorIn(value: unknown, top = true): string | undefined {
  if (Array.isArray(value)) return value.map((v) => operatorIn(v, false)).find(Boolean);
  if (value === null || typeof value !== "object") return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (!top && k.startsWith("$")) return k;
    const inner = operatorIn(v, false);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * A filter's values are compared for equality. LangGraph's store also reads `{"$gt": 2}` and the
 * like as comparisons; this one refuses them rather than look for a value equal to the object.
 */
const Filter = z.lazy(() =>
  storableJson(z.record(z.string(), z.unknown()), { maxBytes: 16 * 1024 }).check(
    z.superRefine((filter, ctx) => {
      const operator = operatorIn(filter);
      if (operator)
        ctx.addIssue({ code: "custom", message: `the operator ${operator} is not supported: filter by equal values` });
    }),
  ),
);
export const SearchItems = z.lazy(() =>
  z.object({
    namespace_prefix: z._default(z.array(label).check(z.maxLength(10)), []),
    filter: z.nullish(Filter),
    query: z.nullish(storableText({ max: 2000 })),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(100)), 10),
    offset: z._default(z.number().check(z.int(), z.gte(0), z.lte(10_000)), 0),
  }),
);
export const ListNamespaces = z.lazy(() =>
  z.object({
    prefix: z.nullish(z.array(label).check(z.maxLength(10))),
    suffix: z.nullish(z.array(label).check(z.maxLength(10))),
    // A namespace has at most 10 labels; the offset's bound is the item search's (Postgres counts in int).
    max_depth: z.nullish(z.number().check(z.int(), z.gte(1), z.lte(10))),
    limit: z._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 100),
    offset: z._default(z.number().check(z.int(), z.gte(0), z.lte(10_000)), 0),
  }),
);

type Fields = { category: string | null; tags: string[]; content: string };

interface Scope {
  userId: string;
  projectId: string | null;
}

/** The caller's own label in a namespace: their id, with periods (and percent signs) escaped when it has any. */
export const userLabel = (userId: string) =>
  userId.includes(".") ? userId.replaceAll("%", "%25").replaceAll(".", "%2E") : userId;

const keyOf = (m: StoredMemory) => (typeof m.metadata.store_key === "string" ? m.metadata.store_key : m.id);
const namespaceOf = (userId: string, projectId: string | null) =>
  projectId === null ? [ROOT, userLabel(userId)] : [ROOT, userLabel(userId), projectId];
const namesCaller = (userId: string, label: string | undefined) => label === userId || label === userLabel(userId);
const namespaceNotFound = () =>
  notFound("namespace_not_found", 'no such namespace: yours are ["memories", <your user id>, <project id>?]');

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

  /** The memories scope a namespace names: only the caller's own; anything else is 404. */
  private scope(userId: string, namespace: string[]): Scope {
    if (namespace[0] !== ROOT || !namesCaller(userId, namespace[1])) throw namespaceNotFound();
    // Memories are kept per user and project: a deeper namespace has nowhere to go.
    if (namespace.length > 3)
      throw badRequest("invalid_namespace", 'a memories namespace is ["memories", <your user id>, <project id>?]');
    return { userId, projectId: namespace[2] ?? null };
  }

  /**
   * A namespace as GET /store/items's query spells it, labels joined by periods. Read against the
   * caller's own: `memories.<user id or label>[.<project>]`, so neither a user id nor a project id
   * holding periods is split apart. Anything else is split at every period (and is not the caller's).
   */
  namespaceOfQuery(userId: string, dotted: string): string[] {
    for (const own of new Set([userId, userLabel(userId)])) {
      const prefix = `${ROOT}.${own}`;
      if (dotted === prefix) return [ROOT, own];
      if (dotted.startsWith(`${prefix}.`)) return [ROOT, own, dotted.slice(prefix.length + 1)];
    }
    return dotted.split(".");
  }

  private memories(): AgentStore {
    if (!this.store) throw new AppError(503, "memory_unavailable", "the store needs Supabase, which is not configured");
    return this.store;
  }

  private async find(scope: Scope, key: string): Promise<StoredMemory | undefined> {
    const [found] = await this.memories().storeItems({ ...scope, key, limit: 1, offset: 0 });
    return found;
  }

  /** Puts an item: a new memory, which replaces (supersedes) the one that had this key. */
  async put(userId: string, body: z.infer<typeof PutItem>): Promise<void> {
    const scope = this.scope(userId, body.namespace);
    const parsed = ItemValue.safeParse(body.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = ["value", ...issue.path.map(String)];
      // An unknown field is an issue of the value itself, naming the keys.
      const keys = "keys" in issue && Array.isArray(issue.keys) ? ` (${issue.keys.join(", ")})` : "";
      throw badRequest(
        `invalid_${where.join("_")}`,
        `${where.join(".")}: ${issue.message}${keys} (an item of the memories namespace is a memory: {content, category?, tags?})`,
      );
    }
    const value = parsed.data;
    const previous = await this.find(scope, body.key);
    const [embedding] = await this.embeddings.embedDocuments([value.content]);
    const { id } = storedMemory(
      await this.memories().insertMemory({
        ...scope,
        content: value.content,
        embedding: embedding!,
        category: value.category ?? null,
        tags: value.tags ?? [],
        metadata: { store_key: body.key, addedAt: new Date().toISOString() },
      }),
    );
    if (previous && previous.id !== id) await this.memories().supersedeMemories(userId, [previous.id], id);
  }

  async get(userId: string, namespace: string[], key: string) {
    const scope = this.scope(userId, namespace);
    const found = await this.find(scope, key);
    // As LangGraph's store answers a key it does not hold (the SDK's getItem reads null).
    if (!found) return null;
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
    if (prefix.length > 1 && !namesCaller(userId, prefix[1])) throw namespaceNotFound();
    const projectId = prefix[2];
    if (body.query) {
      const filter = body.filter ?? {};
      const fields = (m: Fields): Fields => ({
        content: m.content,
        category: m.category,
        tags: m.tags,
      });
      const embedding = await this.embeddings.embedQuery(body.query);
      // As LangGraph's store filters: each named field equal to the filter's value. The match narrows
      // by category and tags itself (tags it holds at least), before it ranks and cuts to the limit,
      // so memories the filter drops never take the places of those it keeps; equality, and the
      // rest of the filter (content), is checked on what it returns.
      // A namespace holds its own project's memories: a project's prefix looks in that project
      // alone, the user's (or the root) in every project, each memory under its own namespace.
      const matches = await this.memories().matchMemories({
        embedding,
        userId,
        projectId: projectId ?? null,
        projectScope: projectId === undefined ? "all" : "exact",
        limit: body.offset + body.limit,
        ...(typeof filter.category === "string" ? { category: filter.category } : {}),
        ...(Array.isArray(filter.tags) && filter.tags.every((t) => typeof t === "string")
          ? { tags: filter.tags as string[] }
          : {}),
      });
      return {
        items: matches
          .filter((m) => Object.entries(filter).every(([k, v]) => isDeepStrictEqual(fields(m)[k as keyof Fields], v)))
          .slice(body.offset, body.offset + body.limit)
          .map((m) => itemOf(m, namespaceOf(userId, m.projectId), m.similarity)),
      };
    }
    const items = await this.memories().storeItems({
      userId,
      projectId,
      filter: body.filter ?? undefined,
      limit: body.limit,
      offset: body.offset,
    });
    return { items: items.map((m) => itemOf(m, namespaceOf(userId, m.projectId))) };
  }

  async namespaces(userId: string, body: z.infer<typeof ListNamespaces>) {
    const seen = new Map<string, string[]>();
    for (const projectId of await this.memories().storeProjects(userId)) {
      const ns = namespaceOf(userId, projectId).slice(0, body.max_depth ?? 3);
      seen.set(JSON.stringify(ns), ns);
    }
    const prefix = body.prefix ?? [];
    const suffix = body.suffix ?? [];
    // The caller's label matches either spelling of their id, wherever the pattern puts it.
    const same = (ns: string[], i: number, p: string) =>
      ns[i] === p || (i === 1 && namesCaller(userId, p) && ns[i] === userLabel(userId));
    return {
      namespaces: [...seen.values()]
        .filter((ns) => prefix.every((p, i) => same(ns, i, p)))
        .filter(
          (ns) => suffix.length <= ns.length && suffix.every((p, i) => same(ns, ns.length - suffix.length + i, p)),
        )
        .slice(body.offset, body.offset + body.limit),
    };
  }
}
