import type * as z from "../../shared/zod";
import { AppError } from "../../shared/errors";
import { type ListNamespaces, type MemoryItems, type PutItem, ROOT, type SearchItems } from "./store";
import type { StoreItems } from "./store-items";

type Item = { updated_at: string; score?: number };

/** LangGraph's store refuses a label it could not spell in a query string (the SDK joins them with periods). */
function checkLabels(namespace: string[]) {
  if (namespace.some((label) => label.includes(".")))
    throw new AppError(
      422,
      "invalid_namespace",
      `Namespace labels cannot be empty or contain periods. Received: ${namespace.join(".").slice(0, 256)}`,
    );
}

/**
 * The Agent Server API's store routes: the memories namespace (["memories", <user>, <project>?])
 * is the memories table (./store.ts), every other namespace the store's own items
 * (./store-items.ts). A search or a namespace list over no prefix reads both, as one ordering.
 */
export class StoreApi {
  constructor(
    private readonly memories: MemoryItems,
    private readonly items: StoreItems,
  ) {}

  private isMemories = (namespace: string[]) => namespace[0] === ROOT;

  async put(userId: string, body: z.infer<typeof PutItem>) {
    if (this.isMemories(body.namespace)) return this.memories.put(userId, body);
    checkLabels(body.namespace);
    return this.items.put(userId, body);
  }

  /** GET /store/items: the namespace as its query spells it, labels joined by periods. */
  async get(userId: string, dotted: string, key: string) {
    const namespace = this.memories.namespaceOfQuery(userId, dotted);
    if (this.isMemories(namespace)) return this.memories.get(userId, namespace, key);
    return this.items.get(userId, namespace, key);
  }

  async delete(userId: string, namespace: string[], key: string) {
    if (this.isMemories(namespace)) return this.memories.delete(userId, namespace, key);
    checkLabels(namespace);
    return this.items.delete(userId, namespace, key);
  }

  async search(userId: string, body: z.infer<typeof SearchItems>) {
    const prefix = body.namespace_prefix;
    if (prefix.length > 0) {
      if (this.isMemories(prefix)) return this.memories.search(userId, body);
      checkLabels(prefix);
      return { items: await this.items.search(userId, body) };
    }
    // Both, each read up to the page's end, merged: by meaning when there is a query, else newest first.
    const end = { offset: 0, limit: Math.min(body.offset + body.limit, 1000) };
    const [memories, items] = await Promise.all([
      this.memories.search(userId, { ...body, ...end }),
      this.items.search(userId, body, end),
    ]);
    const merged: Item[] = [...memories.items, ...items];
    merged.sort((a, b) =>
      body.query
        ? (b.score ?? 0) - (a.score ?? 0)
        : a.updated_at < b.updated_at
          ? 1
          : a.updated_at > b.updated_at
            ? -1
            : 0,
    );
    return { items: merged.slice(body.offset, body.offset + body.limit) };
  }

  async namespaces(userId: string, body: z.infer<typeof ListNamespaces>) {
    const prefix = body.prefix ?? [];
    if (prefix.length > 0 && !this.isMemories(prefix)) {
      checkLabels(prefix);
      return { namespaces: await this.items.namespaces(userId, body) };
    }
    const memories = (await this.memories.namespaces(userId, { ...body, offset: 0, limit: 1000 })).namespaces;
    if (prefix.length > 0) return { namespaces: memories.slice(body.offset, body.offset + body.limit) };
    const items = await this.items.namespaces(userId, body, {
      offset: 0,
      limit: Math.min(body.offset + body.limit, 1000),
    });
    const all = [...memories, ...items].sort((a, b) => (a.join("\u0000") < b.join("\u0000") ? -1 : 1));
    return { namespaces: all.slice(body.offset, body.offset + body.limit) };
  }
}
