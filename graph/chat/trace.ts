import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { UsageMetadata } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import type { TraceStep } from "../../shared/stores/conversations";

/**
 * Records what a run did, from LangChain's callbacks: each graph node entered, each model
 * call (latency, token usage when reported) and each tool call (arguments, latency,
 * success), in start order. Collected here rather than in graph state: state written
 * during a run is not visible to the run's own streaming, and the trace is not the agent's
 * business. Each finished step is also handed to `onStep` (the stream's trace events).
 */
export class TraceCollector extends BaseCallbackHandler {
  name = "trace-collector";
  override awaitHandlers = true;
  readonly steps: TraceStep[] = [];
  private readonly open = new Map<string, TraceStep>();

  constructor(private readonly onStep?: (step: TraceStep) => void) {
    super();
  }

  /** A step that is not a callback: what the turn ran with (its session settings). */
  record(step: TraceStep): void {
    this.steps.push(step);
    this.onStep?.(step);
  }

  private start(runId: string, step: TraceStep) {
    this.steps.push(step);
    this.open.set(runId, step);
  }

  private finish(runId: string, fields: Partial<TraceStep> = {}) {
    const step = this.open.get(runId);
    if (!step) return;
    this.open.delete(runId);
    Object.assign(step, fields, { duration_ms: Date.now() - step.started_at });
    this.onStep?.(step);
  }

  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ) {
    // A node's own run, not the runnables inside it.
    if (metadata?.langgraph_node && runName === metadata.langgraph_node) {
      this.start(runId, { type: "node", name: runName, started_at: Date.now() });
    }
  }

  override handleChainEnd(_outputs: unknown, runId: string) {
    this.finish(runId);
  }

  override handleChainError(err: Error, runId: string) {
    this.finish(runId, { success: false, error: err.message });
  }

  override handleChatModelStart(
    llm: Serialized,
    _messages: unknown,
    runId: string,
    _p?: string,
    extra?: Record<string, unknown>,
  ) {
    const model = (extra?.invocation_params as { model?: string; model_id?: string } | undefined) ?? {};
    this.start(runId, {
      type: "model",
      name: model.model ?? model.model_id ?? llm.id[llm.id.length - 1] ?? "model",
      started_at: Date.now(),
    });
  }

  override handleLLMEnd(output: LLMResult, runId: string) {
    const message = (output.generations[0]?.[0] as { message?: { usage_metadata?: UsageMetadata } } | undefined)
      ?.message;
    const usage = message?.usage_metadata;
    // @langchain/aws maps Converse's cacheReadInputTokens / cacheWriteInputTokens here.
    const cache = usage?.input_token_details;
    this.finish(runId, {
      success: true,
      ...(usage
        ? {
            usage: {
              input_tokens: usage.input_tokens,
              output_tokens: usage.output_tokens,
              total_tokens: usage.total_tokens,
              ...(cache?.cache_read !== undefined ? { cache_read_tokens: cache.cache_read } : {}),
              ...(cache?.cache_creation !== undefined ? { cache_write_tokens: cache.cache_creation } : {}),
            },
          }
        : {}),
    });
  }

  override handleLLMError(err: Error, runId: string) {
    this.finish(runId, { success: false, error: err.message });
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    let args: unknown = input;
    try {
      args = JSON.parse(input);
    } catch {
      // keep the raw input
    }
    this.start(runId, { type: "tool", name: runName ?? "tool", args, started_at: Date.now() });
  }

  override handleToolEnd(output: unknown, runId: string) {
    // Tools here report failure in their output ({"success":false}) rather than by throwing.
    const content = (output as { content?: unknown })?.content ?? output;
    const failed = typeof content === "string" && /^\{\s*"success"\s*:\s*false/.test(content);
    this.finish(runId, { success: !failed });
  }

  override handleToolError(err: Error, runId: string) {
    this.finish(runId, { success: false, error: err.message });
  }
}
