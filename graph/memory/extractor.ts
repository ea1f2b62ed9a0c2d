import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { SESSION_ERASED_SQLSTATE } from "../../shared/stores/user-data";
import { type ExtractedFact, extractFacts } from "./extract";
import type { ExtractionMessage } from "./message";
import { reconcile, type ReconcileDeps, type ReconcileResult } from "./reconcile";

export interface ExtractionResult extends ReconcileResult {
  facts: number;
  /** the model tokens the extraction took */
  tokens: number;
  /** the turn's session was erased with its user: nothing was extracted or stored */
  erased?: true;
}

const NOTHING: ExtractionResult = { facts: 0, tokens: 0, added: 0, duplicates: 0, superseded: 0, forgotten: 0 };

/** Whether a store error is the database refusing a memory of an erased session (012_user_data.sql). */
function isSessionErased(err: unknown): boolean {
  for (let e = err; e && typeof e === "object"; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === SESSION_ERASED_SQLSTATE) return true;
  return false;
}

/** One queued turn: extract its facts, then reconcile them with what the user's memory holds. */
export class MemoryExtractor {
  constructor(
    private readonly deps: ReconcileDeps & {
      model: BaseChatModel;
      /** whether the session was erased with its user (a tombstone): its turn is dropped */
      sessionErased?: (sessionId: string, turnAt?: string) => Promise<boolean>;
      /** counts the extraction's model tokens toward its user's quota (USER_QUOTAS' tokensPerDay); never throws */
      countTokens?: (turn: ExtractionMessage, tokens: number) => Promise<void>;
    },
  ) {}

  async process(turn: ExtractionMessage): Promise<ExtractionResult> {
    // A message in flight (or redelivered) after its user's erasure brings nothing back. Asked
    // first, so no model call is spent on it; the database refuses the memory anyway if the
    // erasure lands while this runs.
    if (await this.deps.sessionErased?.(turn.session_id, turn.turn_at)) return { ...NOTHING, erased: true };
    // Counted once spent, answer parsed or not: a retry's model call is spent again, and counted again.
    let spent = 0;
    let facts: ExtractedFact[];
    let tokens: number;
    try {
      ({ facts, tokens } = await extractFacts(this.deps.model, turn, (n) => {
        spent = n;
      }));
    } finally {
      if (spent > 0) await this.deps.countTokens?.(turn, spent);
    }
    const scope = {
      userId: turn.user_id,
      projectId: turn.project_id,
      sessionId: turn.session_id,
      turnAt: turn.turn_at ?? null,
    };
    try {
      return { facts: facts.length, tokens, ...(await reconcile(this.deps, scope, facts)) };
    } catch (err) {
      if (isSessionErased(err)) return { ...NOTHING, facts: facts.length, tokens, erased: true };
      throw err;
    }
  }
}
