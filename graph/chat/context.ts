import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { RemoveMessage, SystemMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import { messagesTokens, messageTokens } from "../../shared/models/token-estimate";
import { CURRENT_RESULT_SHARE, fitTurns, stablePrefixEnd } from "./context-window";
import { CACHE_POINT, withCachePoint, type CachePolicy } from "./prompt-cache";
import { updateSummary } from "./summary";

/**
 * The chat graph's state: the working window of messages, plus the running summary of
 * what left it (sent to the model as context, never as a message) and the calibration
 * of the token estimate. The full transcript lives in the conversation store.
 */
export const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  summary: Annotation<string>({ reducer: (_, next) => next, default: () => "" }),
  /** the last agent call's reported input tokens over our estimate of them */
  tokenRatio: Annotation<number>({ reducer: (_, next) => next, default: () => 1 }),
});
export type ChatStateType = typeof ChatState.State;

export interface ContextOptions {
  /** CONTEXT_TOKEN_BUDGET: the most input tokens one model call is sent */
  budget: number;
  /** the light model that updates the running summary */
  summarizer: BaseChatModel;
  /** prompt caching, when the chat model supports it */
  cache?: CachePolicy;
  onSummaryError?: (error: unknown) => void;
}

/**
 * The budget when CONTEXT_TOKEN_BUDGET is unset: well inside the model's window (Claude
 * 200k, Nova Micro 128k, Nova Lite/Pro 300k, the offline stand-in 8k), small enough that
 * a long session's per-turn cost stays modest. Unknown models get a cautious 16k.
 */
export function defaultContextBudget(modelId: string | undefined): number {
  if (!modelId) return 6000;
  if (/anthropic\.claude/.test(modelId)) return 48_000;
  if (/amazon\.nova-micro/.test(modelId)) return 32_000;
  if (/amazon\.nova-(lite|pro|premier)/.test(modelId)) return 48_000;
  return 16_000;
}

/**
 * Compaction keeps the stored window between these fractions of the budget: past HIGH,
 * the oldest turns are summarised and removed until the window is under LOW. The gap
 * makes summary calls occasional (every few turns) while per-turn input stays within
 * HIGH/LOW = 1.2x of its steady level.
 */
export const COMPACT_HIGH = 0.6;
export const COMPACT_LOW = 0.5;

const SUMMARY_HEADING =
  "Summary of the earlier conversation (its messages are no longer shown; details the user stated can be looked up with recall_memory):";

/** Calibration is bounded: one odd call must not make the window collapse or overflow. */
const clampRatio = (r: number) => (Number.isFinite(r) ? Math.min(4, Math.max(0.5, r)) : 1);

export function contextWindow(prompt: string, toolTokens: number, options: ContextOptions) {
  const { budget, cache } = options;

  /** `forCall`: this call's prompt (the session's tools), when it is not the one the window was sized for. */
  function systemMessage(summary: string, extra?: string, forCall = prompt): SystemMessage {
    if (!summary && !cache && !extra) return new SystemMessage(forCall);
    const blocks: Record<string, unknown>[] = [{ type: "text", text: forCall }];
    if (cache) blocks.push(CACHE_POINT);
    // After the cache point: what changes between turns (the summary, the session's files).
    if (summary) blocks.push({ type: "text", text: `${SUMMARY_HEADING}\n${summary}` });
    if (extra) blocks.push({ type: "text", text: extra });
    return new SystemMessage({ content: blocks as never });
  }

  /** What one agent call is sent: system (prompt, summary), then the newest turns that fit. */
  function modelInput(
    state: ChatStateType,
    extra?: string,
    forCall?: string,
  ): { messages: BaseMessage[]; estimate: number } {
    const ratio = clampRatio(state.tokenRatio);
    const system = systemMessage(state.summary, extra, forCall);
    const fixed = messageTokens(system) + toolTokens;
    // The results' share from the configured budget alone: a cut must not move with calibration.
    const fitted = fitTurns(
      state.messages,
      budget / ratio - fixed,
      1,
      Math.floor(budget * CURRENT_RESULT_SHARE),
      budget - fixed,
    );
    const window = [...fitted.window];
    if (cache) {
      const end = stablePrefixEnd(window);
      if (end >= 0 && fixed + messagesTokens(window.slice(0, end + 1)) >= cache.minTokens) {
        window[end] = withCachePoint(window[end]!);
      }
    }
    return { messages: [system, ...window], estimate: fixed + fitted.tokens };
  }

  /** The ratio to keep after a call: reported input tokens over our estimate. */
  function calibrate(response: AIMessage, estimate: number): number | undefined {
    const reported = response.usage_metadata?.input_tokens;
    return reported && estimate > 0 ? clampRatio(reported / estimate) : undefined;
  }

  /**
   * Runs at the start of a turn, beside the agent (so off the reply path): when the
   * stored window is past HIGH, summarise its oldest turns and remove them from state.
   * The agent's call in this same step still sees them whole; later calls see the summary.
   * A failed summary call removes nothing, and is retried next turn.
   */
  async function compact(state: ChatStateType): Promise<Partial<ChatStateType>> {
    const ratio = clampRatio(state.tokenRatio);
    const fixed = messageTokens(systemMessage(state.summary)) + toolTokens;
    const all = fitTurns(state.messages, Number.POSITIVE_INFINITY);
    if ((fixed + all.tokens) * ratio <= COMPACT_HIGH * budget) return {};
    const { dropped } = fitTurns(state.messages, (COMPACT_LOW * budget) / ratio - fixed);
    if (dropped.length === 0) return {};
    try {
      const summary = await updateSummary(options.summarizer, state.summary, dropped);
      return { summary, messages: dropped.map((m) => new RemoveMessage({ id: m.id! })) };
    } catch (error) {
      options.onSummaryError?.(error);
      return {};
    }
  }

  return { modelInput, calibrate, compact };
}
