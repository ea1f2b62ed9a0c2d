import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { extractFacts } from "./extract";
import type { ExtractionMessage } from "./message";
import { reconcile, type ReconcileDeps, type ReconcileResult } from "./reconcile";

export interface ExtractionResult extends ReconcileResult {
  facts: number;
}

/** One queued turn: extract its facts, then reconcile them with what the user's memory holds. */
export class MemoryExtractor {
  constructor(private readonly deps: ReconcileDeps & { model: BaseChatModel }) {}

  async process(turn: ExtractionMessage): Promise<ExtractionResult> {
    const facts = await extractFacts(this.deps.model, turn);
    const scope = { userId: turn.user_id, projectId: turn.project_id, sessionId: turn.session_id };
    return { facts: facts.length, ...(await reconcile(this.deps, scope, facts)) };
  }
}
