import { tool } from "@langchain/core/tools";
import * as z from "zod";
import { storable } from "../../../shared/text";
import { guarded, scopeOf, type ToolDeps } from "./context";

const MEMORY_UNAVAILABLE = "Memory is unavailable right now, so nothing was saved or recalled. Please try again later.";

export function storeMemoryTool(deps: ToolDeps) {
  return tool(
    async ({ content, metadata }, config) =>
      guarded(deps, "store_memory", MEMORY_UNAVAILABLE, async () => {
        const scope = scopeOf(config);
        const [embedding] = await deps.embeddings.embedDocuments([content]);
        const { id, created } = await deps.store.insertMemory({
          userId: scope.userId,
          projectId: scope.projectId,
          content,
          embedding: embedding!,
          category: metadata?.category ?? null,
          tags: metadata?.tags ?? [],
          metadata: { ...(metadata?.title ? { title: metadata.title } : {}), addedAt: new Date().toISOString() },
          sourceSessionId: scope.sessionId,
        });
        return {
          success: true,
          memoryId: id,
          message: created ? `I'll remember that ${content}.` : `I already knew that ${content}.`,
        };
      }),
    {
      name: "store_memory",
      description:
        "Save a durable fact about the user for future conversations: a preference, a decision, a constraint, " +
        "or something about them or their work. Use it when the user asks you to remember something, or states " +
        "something worth keeping. One self-contained fact per call. Storing a fact twice is harmless.",
      schema: z.object({
        content: storable(z.string().trim().min(1).max(2000)).describe("The fact, written so it makes sense on its own later."),
        metadata: z
          .object({
            title: storable(z.string().max(200)).nullish(),
            category: storable(z.string().max(64)).nullish().describe("e.g. preference, personal, work, decision"),
            tags: z.array(storable(z.string().max(64))).max(10).nullish(),
          })
          .nullish(),
      }),
    },
  );
}

export function recallMemoryTool(deps: ToolDeps) {
  return tool(
    async ({ query, limit, category, tags }, config) =>
      guarded(deps, "recall_memory", MEMORY_UNAVAILABLE, async () => {
        const scope = scopeOf(config);
        const embedding = await deps.embeddings.embedQuery(query);
        const matches = await deps.store.matchMemories({
          embedding,
          limit: limit ?? 5,
          userId: scope.userId,
          projectId: scope.projectId,
          category: category ?? null,
          tags: tags ?? null,
        });
        const results = matches
          .filter((m) => m.similarity >= deps.minMemoryScore)
          .map((m) => ({
            content: m.content,
            score: Number(m.similarity.toFixed(4)),
            metadata: { ...m.metadata, category: m.category, tags: m.tags },
            memoryId: m.id,
            createdAt: m.createdAt,
          }));
        return results.length > 0
          ? { success: true, results }
          : { success: true, results, message: "No matching memories." };
      }),
    {
      name: "recall_memory",
      description:
        "Search what you remember about the user from earlier conversations, by meaning. Use it before answering " +
        "questions about the user's preferences, history, plans or anything they told you before.",
      schema: z.object({
        query: storable(z.string().trim().min(1).max(1000)).describe("What to look for, in natural language."),
        limit: z.number().int().min(1).max(10).nullish().describe("How many memories to return (default 5)."),
        category: storable(z.string().max(64)).nullish(),
        tags: z.array(storable(z.string().max(64))).max(10).nullish(),
      }),
    },
  );
}
