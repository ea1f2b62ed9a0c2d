import * as z from "zod";
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
    query: storable(z.string().trim().min(1).max(1000)).describe("What to look for, in natural language."),
    limit: z.number().int().min(1).max(10).nullish().describe("How many memories to return (default 5)."),
    category: storable(z.string().max(64)).nullish(),
    tags: z
      .array(storable(z.string().max(64)))
      .max(10)
      .nullish(),
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
