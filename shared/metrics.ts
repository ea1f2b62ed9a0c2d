import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

export { MetricUnit };
export type { Metrics };

/**
 * CloudWatch metrics in embedded metric format (Powertools): written to the function's log
 * and turned into metrics by CloudWatch, with no API call on the request path. Off locally
 * (POWERTOOLS_METRICS_DISABLED), where there is no CloudWatch to read them.
 */
export function createMetrics(service: string): Metrics {
  return new Metrics({ namespace: "AgentBackend", serviceName: service });
}

type Usage = { input_tokens?: number; output_tokens?: number; cache_read_tokens?: number; cache_write_tokens?: number };

/**
 * A chat turn's figures: one reply, its tool calls, each model call's latency, and the
 * turn's model tokens (input, output, and the prompt cache's reads and writes).
 */
export function recordTurnMetrics(
  metrics: Metrics,
  trace: { type: string; duration_ms?: number; usage?: Usage }[],
): void {
  metrics.addMetric("Replies", MetricUnit.Count, 1);
  metrics.addMetric("ToolCalls", MetricUnit.Count, trace.filter((s) => s.type === "tool").length);
  const tokens = { InputTokens: 0, OutputTokens: 0, CacheReadTokens: 0, CacheWriteTokens: 0 };
  for (const step of trace) {
    if (step.type !== "model") continue;
    if (step.duration_ms !== undefined) metrics.addMetric("ModelLatency", MetricUnit.Milliseconds, step.duration_ms);
    tokens.InputTokens += step.usage?.input_tokens ?? 0;
    tokens.OutputTokens += step.usage?.output_tokens ?? 0;
    tokens.CacheReadTokens += step.usage?.cache_read_tokens ?? 0;
    tokens.CacheWriteTokens += step.usage?.cache_write_tokens ?? 0;
  }
  for (const [name, value] of Object.entries(tokens)) metrics.addMetric(name, MetricUnit.Count, value);
}
