import { LeaseLost, type SessionLeases } from "../../shared/stores/session-lease";
import type { SupportGraph } from "./graph";

/** One customer part to answer, as the webhook queued it. */
export interface SupportRequest {
  conversation_id: string;
  part_id: string;
}

export interface SupportOutcome {
  delivery: "sent" | "duplicate" | "escalated" | "ignored" | null;
  /** why the part was not answered: it is not a customer's message in this conversation */
  ignored?: string;
  hops: number;
  error: string | null;
}

/** The checkpoint thread a conversation's runs share: every part of it is answered on one thread. */
export const supportThreadId = (conversationId: string) => `intercom:${conversationId}`;

export class ConversationBusy extends Error {
  constructor(conversationId: string) {
    super(`conversation ${conversationId} is already being answered`);
    this.name = "ConversationBusy";
  }
}

/**
 * One customer part, answered on its conversation's thread (`intercom:<conversation_id>`), as
 * ChatService answers a chat turn: one run per conversation at a time (the session lease; a busy
 * conversation's message is retried later), stopped when the deadline passes or the lease is lost
 * (a reply sent after Lambda stopped the invocation would be one nobody recorded).
 */
export class SupportService {
  constructor(
    private readonly deps: { graph: SupportGraph; leases: SessionLeases; maxHops: number; recursionLimit?: number },
  ) {}

  async answer(request: SupportRequest, deadline: number): Promise<SupportOutcome> {
    const thread = supportThreadId(request.conversation_id);
    const lease = await this.deps.leases.tryAcquire(thread);
    if (!lease) throw new ConversationBusy(request.conversation_id);
    try {
      const state = await this.deps.graph.invoke(
        { conversation_id: request.conversation_id, part_id: request.part_id, max_hops: this.deps.maxHops },
        {
          configurable: { thread_id: thread },
          recursionLimit: this.deps.recursionLimit ?? 40,
          signal: AbortSignal.any([lease.signal, AbortSignal.timeout(Math.max(0, deadline - Date.now()))]),
        },
      );
      return {
        delivery: state.response_delivery,
        ...(state.ignored_reason ? { ignored: state.ignored_reason } : {}),
        hops: state.hops.filter((h) => h.part_id === request.part_id).length,
        error: state.error,
      };
    } catch (err) {
      if (lease.signal.aborted && lease.signal.reason instanceof LeaseLost) throw lease.signal.reason;
      throw err;
    } finally {
      await lease.release();
    }
  }
}
