import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { storeUnavailable } from "../../shared/errors";
import type { ConversationStore } from "../../shared/stores/conversations";
import type { Lease, ReleaseOptions } from "../../shared/stores/session-lease";
import type { ChatGraph } from "./graph";

/** What taking a turn out of a thread needs: its graph, and the transcript to check against. */
export interface TurnRepairDeps {
  graph: Pick<ChatGraph, "getState" | "updateState">;
  conversations?: Pick<ConversationStore, "get">;
}

/** The turn whose human message is `humanId`, and everything after it, out of the graph state (LangGraph's RemoveMessage). */
export async function removeTurn(graph: TurnRepairDeps["graph"], sessionId: string, humanId: string): Promise<void> {
  const config = { configurable: { thread_id: sessionId } };
  const state = await graph.getState(config);
  const messages = ((state.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
  const start = messages.findIndex((m) => m.id === humanId);
  if (start < 0) return;
  const removals = messages.slice(start).map((m) => new RemoveMessage({ id: m.id! }));
  await graph.updateState(config, { messages: removals }, "agent");
}

/**
 * An earlier turn that never let go of the session's lease itself (its process died, at its
 * timeout or out of memory, or it lost the lease) may have written the graph state and not the
 * transcript: the undo that keeps the two together runs in that turn's process. Whoever takes the
 * lease next, to run a turn or write the state, finds its mark (SessionLeaseAttempt.unfinished)
 * and calls this first. Its message not in the transcript, the turn is taken out of the state, as
 * its own undo would have. One transcript read, only after such a turn. If that fails, the lease
 * is let go with the earlier turn's mark put back, so the next taker tries again, and the caller
 * is refused (503).
 */
export async function repairUnfinished(
  { graph, conversations }: TurnRepairDeps,
  sessionId: string,
  lease: Lease,
  messageId: string,
  /** what the taker's release must carry if it gives up (its quota count, given back) */
  release: Pick<ReleaseOptions, "alongside"> = {},
): Promise<void> {
  if (!conversations) return;
  try {
    const recorded = await conversations.get(sessionId);
    if (recorded?.messages.some((m) => m.message_id === messageId)) return;
    await removeTurn(graph, sessionId, messageId);
  } catch (err) {
    await lease.release({ ...release, mark: { restore: messageId } });
    throw storeUnavailable(err);
  }
}
