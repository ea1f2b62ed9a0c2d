import { useEffect, useState } from "react";
import { api, describeError, path, type TraceStep, type TranscriptMessage } from "./api";
import type { TraceTarget } from "./chat/Chat";
import { ErrorNote } from "./ErrorNote";

interface Props {
  user: string;
  threadId: string | null;
  target: TraceTarget | undefined;
}

/**
 * A reply's run as a waterfall: every node, model call and tool call on one time axis, with its
 * latency, token usage and arguments. The traces come from the sessions API
 * (`GET /api/sessions/{id}/messages?trace=1`), one per assistant message of the transcript.
 */
export function Trace({ user, threadId, target }: Props) {
  const [replies, setReplies] = useState<TranscriptMessage[]>();
  const [error, setError] = useState<{ code: string; message: string }>();
  const [selected, setSelected] = useState<number>(-1);
  const sessionId = target?.threadId ?? threadId;

  useEffect(() => {
    setReplies(undefined);
    setError(undefined);
    if (!sessionId) return;
    let live = true;
    api<TranscriptMessage[]>(user, `${path`/api/sessions/${sessionId}/messages`}?trace=1`)
      .then((messages) => {
        if (!live) return;
        const assistant = messages.filter((m) => m.role === "assistant");
        setReplies(assistant);
        setSelected(pick(assistant, target));
      })
      .catch((err) => live && setError(describeError(err)));
    return () => {
      live = false;
    };
  }, [user, sessionId, target]);

  if (!sessionId)
    return <p className="hint">Start a chat, then open a reply's trace from its “Trace of this reply” link.</p>;
  if (error) return <ErrorNote error={error} />;
  if (!replies) return <p aria-busy="true">Loading the trace…</p>;
  if (replies.length === 0) return <p className="hint">This session has no replies yet.</p>;
  const reply = replies[selected];
  return (
    <section aria-labelledby="trace-heading">
      <h2 id="trace-heading">Trace</h2>
      <label htmlFor="trace-reply">Reply</label>
      <select id="trace-reply" value={selected} onChange={(e) => setSelected(Number(e.target.value))}>
        {replies.map((m, i) => (
          <option key={`${m.created_at}-${i}`} value={i}>
            {i + 1}. {m.content.slice(0, 60)}
          </option>
        ))}
      </select>
      {reply && <Waterfall steps={reply.trace ?? []} />}
    </section>
  );
}

/** The transcript's reply the chat pointed at: by its text, else by its place counted from the end. */
function pick(replies: TranscriptMessage[], target: TraceTarget | undefined): number {
  if (!target) return replies.length - 1;
  for (let i = replies.length - 1; i >= 0; i--) if (replies[i]!.content === target.content) return i;
  return Math.max(0, replies.length - 1 - target.turnsAfter);
}

export function Waterfall({ steps }: { steps: TraceStep[] }) {
  if (steps.length === 0) return <p className="hint">No trace was recorded for this reply.</p>;
  const start = Math.min(...steps.map((s) => s.started_at));
  const end = Math.max(...steps.map((s) => s.started_at + (s.duration_ms ?? 0)));
  const total = Math.max(1, end - start);
  const usage = totals(steps);
  return (
    <div className="waterfall" data-testid="waterfall">
      <p className="trace-summary">
        {total} ms in all · {steps.filter((s) => s.type === "model").length} model call(s) ·{" "}
        {steps.filter((s) => s.type === "tool").length} tool call(s) · tokens in {usage.input}, out {usage.output},
        cached {usage.cached}
      </p>
      <table>
        <caption className="visually-hidden">Steps of the run on a time axis</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Time</th>
            <th scope="col">Latency</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step, i) => {
            const left = ((step.started_at - start) / total) * 100;
            const width = Math.max(0.5, ((step.duration_ms ?? 0) / total) * 100);
            return (
              <tr key={`${step.started_at}-${i}`} className={`step step-${step.type}`} data-testid="trace-step">
                <th scope="row">
                  <span className={`kind kind-${step.type}`}>{step.type}</span> {step.name}
                </th>
                <td className="bar-cell">
                  <span className="bar-track" aria-hidden="true">
                    <span className="bar" ref={(el) => position(el, left, width)} />
                  </span>
                  <span className="visually-hidden">starts at {Math.round(step.started_at - start)} ms</span>
                </td>
                <td>{step.duration_ms === undefined ? "—" : `${step.duration_ms} ms`}</td>
                <td>
                  <StepDetails step={step} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The bar's place is set through the CSSOM, not a style attribute: the page's Content-Security-Policy
 * allows no inline styles, and CSSOM writes are not inline styles.
 */
function position(el: HTMLElement | null, left: number, width: number) {
  if (!el) return;
  el.style.marginLeft = `${left}%`;
  el.style.width = `${Math.min(width, 100 - left)}%`;
}

function StepDetails({ step }: { step: TraceStep }) {
  const parts: string[] = [];
  if (step.usage) {
    const u = step.usage;
    parts.push(`in ${u.input_tokens ?? "?"} · out ${u.output_tokens ?? "?"}`);
    if (u.cache_read_tokens !== undefined || u.cache_write_tokens !== undefined)
      parts.push(`cache read ${u.cache_read_tokens ?? 0} · write ${u.cache_write_tokens ?? 0}`);
  }
  if (step.success === false || step.error) parts.push(`failed${step.error ? `: ${step.error}` : ""}`);
  return (
    <>
      {parts.length > 0 && <span>{parts.join(" · ")}</span>}
      {step.args !== undefined && (
        <details>
          <summary>arguments</summary>
          <pre>{JSON.stringify(step.args, null, 2)}</pre>
        </details>
      )}
    </>
  );
}

function totals(steps: TraceStep[]) {
  let input = 0;
  let output = 0;
  let cached = 0;
  for (const s of steps) {
    input += s.usage?.input_tokens ?? 0;
    output += s.usage?.output_tokens ?? 0;
    cached += s.usage?.cache_read_tokens ?? 0;
  }
  return { input, output, cached };
}
