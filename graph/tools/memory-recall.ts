import * as z from "../../shared/zod";
import { MEMORY_UNAVAILABLE } from "./memory-store";
import { storable } from "../../shared/text";
import { defineTool } from "./tool";

export const recallMemory = defineTool({
  name: "recall_memory",
  switch: { group: "memory" },
  description:
    "Search what you remember about the user from earlier conversations, by meaning. Use it before answering " +
    "questions about the user's preferences, history, plans or anything they told you before.",
  schema: z.object({
    query: storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(1000))).check(
      z.describe("What to look for, in natural language."),
    ),
    limit: z
      .nullish(z.number().check(z.int(), z.gte(1), z.lte(10)))
      .check(z.describe("How many memories to return (default 5).")),
    category: z.nullish(storable(z.string().check(z.maxLength(64)))),
    tags: z.nullish(z.array(storable(z.string().check(z.maxLength(64)))).check(z.maxLength(10))),
  }),
  needs: ["store", "embeddings"],
  unavailable: MEMORY_UNAVAILABLE,
  async run({ query, limit, category, tags }, { scope, deps }) {
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
  },
  offline: { trigger: "question" },
});
