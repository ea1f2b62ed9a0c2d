import type { Embeddings } from "@langchain/core/embeddings";
import type { AgentStore, MemoryMatch } from "../../shared/stores/agent-store";
import type { ExtractedFact } from "./extract";

export interface ReconcileDeps {
  store: AgentStore;
  embeddings: Embeddings;
  /** cosine similarity at or above which a fact counts as already known (calibrated in the retrieval bench) */
  duplicateThreshold: number;
}

export interface Scope {
  userId: string;
  projectId: string | null;
  sessionId: string;
  /** when the turn began (ISO; unknown: null), for the memories it writes (NewMemory.turnAt) */
  turnAt?: string | null;
}

export interface ReconcileResult {
  added: number;
  duplicates: number;
  superseded: number;
  /** facts the user deleted after the turn began (021_forgotten_memories.sql): not stored again */
  forgotten: number;
}

const normalise = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * What a stored memory is about, as the model named it when it was extracted or stored (a memory
 * stored without one can be a duplicate, never superseded by subject).
 */
const subjectOfMemory = (m: MemoryMatch) => (typeof m.metadata.subject === "string" ? m.metadata.subject : undefined);

/**
 * Folds new facts into the user's memories, with rules and similarity rather than a second
 * model call (cheaper, deterministic, and the same offline):
 *
 * - the same subject with other content: of the two, the one said last stays current and the
 *   other is kept as replaced (supersede_memories, by when each was said);
 * - the same words: a duplicate, stored again only to count from its latest saying;
 * - similarity at or above the threshold: a duplicate, skipped;
 * - anything else: a new memory.
 *
 * Re-running it on the same facts changes nothing but that time: inserts dedup on the content
 * hash, and a supersession already made is not made again.
 */
export async function reconcile(deps: ReconcileDeps, scope: Scope, facts: ExtractedFact[]): Promise<ReconcileResult> {
  const result: ReconcileResult = { added: 0, duplicates: 0, superseded: 0, forgotten: 0 };
  if (facts.length === 0) return result;
  const embeddings = await deps.embeddings.embedDocuments(facts.map((f) => f.content));
  for (const [i, fact] of facts.entries()) {
    const embedding = embeddings[i]!;
    const neighbours = await deps.store.matchMemories({
      embedding,
      limit: 5,
      userId: scope.userId,
      projectId: scope.projectId,
    });
    const same = neighbours.find((m) => normalise(m.content) === normalise(fact.content));
    const changed = neighbours.filter(
      (m) => m !== same && subjectOfMemory(m) === fact.subject && normalise(m.content) !== normalise(fact.content),
    );
    // A fact said again word for word, with a subject, is stored again all the same: its memory then
    // counts from this saying, against a later fact of its subject that lands after it.
    const again = same !== undefined && fact.subject !== undefined;
    if (!again && changed.length === 0 && (same || neighbours.some((m) => m.similarity >= deps.duplicateThreshold))) {
      result.duplicates++;
      continue;
    }
    const inserted = await deps.store.insertMemory({
      userId: scope.userId,
      projectId: scope.projectId,
      content: fact.content,
      embedding,
      category: fact.category,
      metadata: { subject: fact.subject, source: "extraction" },
      sourceSessionId: scope.sessionId,
      turnAt: scope.turnAt,
      // a fact as near a memory the user deleted since as to a known one is that memory
      sameSimilarity: deps.duplicateThreshold,
    });
    if (inserted.forgotten) {
      result.forgotten++;
      continue;
    }
    const { id, created } = inserted;
    if (created) result.added++;
    else result.duplicates++;
    // Settled by subject even when no neighbour had it: another turn's memory of the subject may be
    // landing at the same moment (supersede_memories sees both, whichever settles second).
    if (changed.length > 0 || fact.subject)
      result.superseded += await deps.store.supersedeMemories(
        scope.userId,
        changed.map((m) => m.id),
        id,
      );
  }
  return result;
}
