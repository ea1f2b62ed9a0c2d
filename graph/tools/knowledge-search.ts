import * as z from "../../shared/zod";
import { storable } from "../../shared/text";
import { defineTool } from "./tool";

export const searchKnowledge = defineTool({
  name: "search_knowledge_base",
  switch: { group: "knowledge" },
  description:
    "Search the company's documents (policies, FAQs, guides) by keywords and meaning. Use it for questions " +
    "about the product, pricing, policies or how to do something. Cite the source you used.",
  schema: z.object({
    query: storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(1000))).check(
      z.describe("The question or keywords."),
    ),
    limit: z
      .nullish(z.number().check(z.int(), z.gte(1), z.lte(10)))
      .check(z.describe("How many passages to return (default 5).")),
  }),
  needs: ["store", "embeddings"],
  unavailable: "The knowledge base is unavailable right now.",
  async run({ query, limit }, { deps }) {
    const embedding = await deps.embeddings.embedQuery(query);
    const matches = await deps.store.matchKnowledge({ text: query, embedding, limit: limit ?? 5 });
    const results = matches.map((m) => ({
      source: m.source,
      content: m.content,
      score: Number(m.similarity.toFixed(4)),
    }));
    return results.length > 0
      ? { success: true, results }
      : { success: true, results, message: "No matching documents." };
  },
  offline: { trigger: "question" },
  gathers: "passages",
});
