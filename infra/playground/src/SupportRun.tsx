import type { SupportRun as Run } from "../../../graph/support/run-types";
import { api, path } from "./api";
import { ErrorNote } from "./ErrorNote";
import { usePolling } from "./usePolling";

type Hop = Run["hops"][number];

/**
 * What the support agent did on one conversation, hop by hop (plan, gather, coverage), as the
 * worker's checkpoint holds it (GET /_local/intercom/conversations/{id}/run), polled like the
 * Intercom actions beside it. Each hop is folded into its summary line until opened.
 */
export function SupportRun({ conversationId }: { conversationId: string }) {
  const run = usePolling(
    () => api<Run>("playground", path`/_local/intercom/conversations/${conversationId}/run`),
    1500,
    conversationId,
  );
  const headingId = `run-${conversationId}`;
  return (
    <section className="run" aria-labelledby={headingId}>
      <h4 id={headingId}>
        Support run{" "}
        <span className="badge" data-testid="run-status">
          {run.data ? statusOf(run.data) : "loading…"}
        </span>
      </h4>
      {run.error && <ErrorNote error={run.error} />}
      {run.data && <Outcome run={run.data} />}
      {run.data && run.data.hops.length > 0 && (
        <ol className="hops" aria-label={`Hops of the support run on conversation ${conversationId}`}>
          {run.data.hops.map((hop) => (
            <li key={`${hop.part_id}-${hop.number}`}>
              <HopDetails hop={hop} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function statusOf(run: Run): string {
  if (run.status === "waiting") return "waiting for the worker";
  if (run.status === "running") return `running: ${run.next.join(", ")}`;
  return `ended: ${run.response_delivery ?? "no delivery"}`;
}

/** The latest part's end: validation, escalation, why it was ignored, what failed. */
function Outcome({ run }: { run: Run }) {
  const lines = [
    run.validate && `Validation ${run.validate.valid ? "passed" : "failed"}: ${run.validate.reasoning}`,
    run.escalate && `Escalated (from ${run.escalate.source}): ${run.escalate.reason}`,
    run.ignored_reason && `Ignored: ${run.ignored_reason}`,
    run.error && `Error: ${run.error}`,
  ].filter((line): line is string => !!line);
  if (lines.length === 0) return null;
  return (
    <ul className="run-outcome">
      {lines.map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  );
}

function HopDetails({ hop }: { hop: Hop }) {
  const { plan, gather, coverage } = hop;
  const succeeded = gather.tool_results.filter((r) => r.success).length;
  const id = `hop-${hop.part_id}-${hop.number}`;
  return (
    <details className="hop" data-testid="hop">
      <summary>
        <strong>Hop {hop.number}</strong> · {plan.tool_calls.length} tool call(s), {succeeded} ok in{" "}
        {gather.total_execution_time_ms} ms ·{" "}
        <span className={coverage.data_sufficient ? "coverage-sufficient" : "coverage-short"}>
          coverage {coverage.coverage_score.toFixed(2)}, {coverage.data_sufficient ? "sufficient" : "not sufficient"}
        </span>
      </summary>
      <div className="hop-body">
        <section aria-labelledby={`${id}-plan`}>
          <h5 id={`${id}-plan`}>Plan</h5>
          <p className="meta">
            part {hop.part_id}: “{plan.user_query}”
          </p>
          <p>{plan.reasoning}</p>
          <ul className="hop-items">
            {plan.tool_calls.map((call, i) => (
              <li key={`${call.tool_name}-${i}`}>
                <span className="tool-name">{call.tool_name}</span> <span className="meta">{call.reasoning}</span>
                {Object.keys(call.parameters).length > 0 && <pre>{JSON.stringify(call.parameters, null, 2)}</pre>}
              </li>
            ))}
          </ul>
        </section>
        <section aria-labelledby={`${id}-gather`}>
          <h5 id={`${id}-gather`}>Gather</h5>
          <ul className="hop-items">
            {gather.tool_results.map((result, i) => (
              <li key={`${result.tool_name}-${i}`} className={result.success ? undefined : "tool-error"}>
                <span className="tool-name">{result.tool_name}</span>{" "}
                <span className="tool-status">
                  {result.success ? "ok" : "failed"} · {result.execution_time_ms} ms
                </span>
                {result.error && <p>{result.error}</p>}
                {result.data != null && (
                  <details>
                    <summary>what it returned</summary>
                    <pre>{typeof result.data === "string" ? result.data : JSON.stringify(result.data, null, 2)}</pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
        </section>
        <section aria-labelledby={`${id}-coverage`}>
          <h5 id={`${id}-coverage`}>Coverage</h5>
          <p>
            score {coverage.coverage_score.toFixed(2)} · {coverage.data_sufficient ? "sufficient" : "not sufficient"}
          </p>
          <p>{coverage.reasoning}</p>
          {coverage.missing_data.length > 0 && (
            <>
              <p className="meta">Missing:</p>
              <ul className="hop-items">
                {coverage.missing_data.map((missing) => (
                  <li key={missing}>{missing}</li>
                ))}
              </ul>
            </>
          )}
        </section>
      </div>
    </details>
  );
}
