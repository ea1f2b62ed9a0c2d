import type { Embeddings } from "@langchain/core/embeddings";
import type * as z from "../../shared/zod";
import { AppError } from "../../shared/errors";
import type { AgentStore, StoreItem } from "../../shared/stores/agent-store";
import type { ListNamespaces, PutItem, SearchItems } from "./store";

/** What of an item is embedded, at most: a model reads this much of it. */
const INDEXED_TEXT_CHARS = 8000;

/** The text of a value's indexed fields: each path's value ("$" the whole value), strings as they are. */
export function indexedText(value: Record<string, unknown>, fields: string[]): string {
  const at = (path: string): unknown =>
    path === "$"
      ? value
      : path
          .split(".")
          .reduce<unknown>(
            (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
            value,
          );
  return fields
    .map(at)
    .filter((v) => v !== undefined && v !== null)
    .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
    .join("\n")
    .slice(0, INDEXED_TEXT_CHARS);
}

/** An item as the API shows it (`Item` in the SDK's types). */
export const itemJson = (item: StoreItem) => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  created_at: item.createdAt,
  updated_at: item.updatedAt,
  ...(item.score === undefined ? {} : { score: item.score }),
});

/**
 * The Agent Server API's store as LangGraph documents it, for every namespace but the memories':
 * any JSON object under any namespace, each user's items their own (the user is the root of every
 * namespace they name, so nobody else's can be named). An item is embedded on its indexed fields
 * (the whole value unless `index` names others; none with `index: false`) and found by meaning on
 * them. Kept in Supabase beside the memories (supabase/migrations/013_agent_store_items.sql).
 */
export class StoreItems {
  constructor(
    private readonly store: AgentStore | undefined,
    private readonly embeddings: Embeddings,
  ) {}

  private items(): AgentStore {
    if (!this.store) throw new AppError(503, "store_unavailable", "the store needs Supabase, which is not configured");
    return this.store;
  }

  async put(userId: string, body: z.infer<typeof PutItem>): Promise<void> {
    const fields = body.index === false ? [] : (body.index ?? ["$"]);
    const text = fields.length > 0 ? indexedText(body.value, fields) : "";
    const [embedding] = text ? await this.embeddings.embedDocuments([text]) : [];
    await this.items().putItem({
      userId,
      namespace: body.namespace,
      key: body.key,
      value: body.value,
      ...(embedding ? { embedding } : {}),
    });
  }

  async get(userId: string, namespace: string[], key: string) {
    const item = await this.items().getItem(userId, namespace, key);
    return item ? itemJson(item) : null;
  }

  async delete(userId: string, namespace: string[], key: string): Promise<void> {
    await this.items().deleteItem(userId, namespace, key);
  }

  /** Items under a prefix, by filter; with a query, by meaning. `window` items from the first: a page's end. */
  async search(userId: string, body: z.infer<typeof SearchItems>, window = { offset: body.offset, limit: body.limit }) {
    const embedding = body.query ? await this.embeddings.embedQuery(body.query) : undefined;
    const found = await this.items().searchItems({
      userId,
      prefix: body.namespace_prefix,
      ...(body.filter ? { filter: body.filter } : {}),
      ...(embedding ? { embedding } : {}),
      limit: window.limit,
      offset: window.offset,
    });
    return found.map(itemJson);
  }

  async namespaces(
    userId: string,
    body: z.infer<typeof ListNamespaces>,
    window = { offset: body.offset, limit: body.limit },
  ) {
    return this.items().listNamespaces({
      userId,
      prefix: body.prefix ?? [],
      suffix: body.suffix ?? [],
      ...(body.max_depth ? { maxDepth: body.max_depth } : {}),
      limit: window.limit,
      offset: window.offset,
    });
  }
}
