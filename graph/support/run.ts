import type { SupportGraph } from "./graph";
import type { SupportRun } from "./run-types";
import { supportThreadId } from "./service";
import type { SupportStateType } from "./state";

/**
 * The latest state of a conversation's support run, read from its thread's checkpoint by the
 * graph (the workers' own, or supportGraphShape on their checkpointer). A thread with no
 * checkpoint has no values at all, hence the defaults.
 */
export async function latestSupportRun(graph: SupportGraph, conversationId: string): Promise<SupportRun> {
  const snapshot = await graph.getState({ configurable: { thread_id: supportThreadId(conversationId) } });
  const values = snapshot.values as Partial<SupportStateType>;
  return {
    conversation_id: conversationId,
    status: !snapshot.createdAt ? "waiting" : snapshot.next.length ? "running" : "ended",
    next: [...snapshot.next],
    part_id: values.part_id ?? null,
    updated_at: snapshot.createdAt ?? null,
    hops: values.hops ?? [],
    draft: values.draft ?? null,
    validate: values.validate ?? null,
    escalate: values.escalate ?? null,
    response_delivery: values.response_delivery ?? null,
    ignored_reason: values.ignored_reason ?? null,
    finalize: values.finalize ?? null,
    error: values.error ?? null,
  };
}
