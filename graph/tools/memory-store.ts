import * as z from "../../shared/zod";
import { subjectOf } from "../../shared/facts";
import { storable } from "../../shared/text";
import { defineTool } from "./tool";

export const MEMORY_UNAVAILABLE =
  "Memory is unavailable right now, so nothing was saved or recalled. Please try again later.";

export const storeMemory = defineTool({
  name: "store_memory",
  switch: { group: "memory", writesMemory: true },
  description:
    "Save a durable fact about the user for future conversations: a preference, a decision, a constraint, " +
    "or something about them or their work. Use it when the user asks you to remember something, or states " +
    "something worth keeping. One self-contained fact per call. Storing a fact twice is harmless.",
  schema: z.object({
    content: storable(z.string().check(z.trim(), z.minLength(1), z.maxLength(2000))).check(
      z.describe("The fact, written so it makes sense on its own later."),
    ),
    subject: z
      .nullish(storable(z.string().check(z.trim(), z.maxLength(100))))
      .check(
        z.describe(
          'What the fact is about, as a short lower-case phrase ("dog\'s name", "home city"): a later fact with the same subject replaces this one.',
        ),
      ),
    metadata: z.nullish(
      z.object({
        title: z.nullish(storable(z.string().check(z.maxLength(200)))),
        category: z
          .nullish(storable(z.string().check(z.maxLength(64))))
          .check(z.describe("e.g. preference, personal, work, decision")),
        tags: z.nullish(z.array(storable(z.string().check(z.maxLength(64)))).check(z.maxLength(10))),
      }),
    ),
  }),
  needs: ["store", "embeddings"],
  unavailable: MEMORY_UNAVAILABLE,
  async run({ content, subject, metadata }, { scope, deps }) {
    const [embedding] = await deps.embeddings.embedDocuments([content]);
    const inserted = await deps.store.insertMemory({
      userId: scope.userId,
      projectId: scope.projectId,
      content,
      embedding: embedding!,
      category: metadata?.category ?? null,
      tags: metadata?.tags ?? [],
      metadata: {
        ...(metadata?.title ? { title: metadata.title } : {}),
        ...(subject ? { subject: subject.toLowerCase() } : {}),
        addedAt: new Date().toISOString(),
      },
      sourceSessionId: scope.sessionId,
      turnAt: scope.turnAt,
    });
    // The user deleted it while this turn ran (from another tab, say): kept forgotten.
    if (inserted.forgotten)
      return {
        success: false,
        message:
          "Not saved: the user asked me to forget this while we were talking. I won't store it again unless they tell me to.",
      };
    const { id, created } = inserted;
    return {
      success: true,
      memoryId: id,
      message: created ? `I'll remember that ${content}.` : `I already knew that ${content}.`,
    };
  },
  // The stand-in stores what follows "remember (that)", with the subject its English rules read.
  offline: {
    trigger: "remember",
    args: (content) => ({ content, ...(subjectOf(content) ? { subject: subjectOf(content) } : {}) }),
    confirms: true,
  },
});
