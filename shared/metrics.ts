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

/** A chat turn's figures: one reply, its tool calls, and each model call's latency. */
export function recordTurnMetrics(metrics: Metrics, trace: { type: string; duration_ms?: number }[]): void {
  metrics.addMetric("Replies", MetricUnit.Count, 1);
  metrics.addMetric("ToolCalls", MetricUnit.Count, trace.filter((s) => s.type === "tool").length);
  for (const step of trace) {
    if (step.type === "model" && step.duration_ms !== undefined)
      metrics.addMetric("ModelLatency", MetricUnit.Milliseconds, step.duration_ms);
  }
}
