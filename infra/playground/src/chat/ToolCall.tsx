import type { PairedToolCall } from "./messages";

/**
 * One tool call inside the answer that made it: collapsed to its name and a one-line summary of the
 * result, opened (a native <details>, so Enter and Space work) to its arguments and full result.
 */
export function ToolCall({ call, waiting = false }: { call: PairedToolCall; waiting?: boolean }) {
  const { result, state } = call;
  // A call with no answer while the run waits for approval has not started.
  const status = result !== undefined ? summarize(result) : waiting ? "waiting for approval" : "running…";
  return (
    <details className={`tool-call tool-${state}`} data-testid="tool-call">
      <summary>
        <span className="tool-name">{call.name}</span> <span className="tool-status">{status}</span>
      </summary>
      <div className="tool-body">
        <h4>Arguments</h4>
        <pre>{JSON.stringify(call.args, null, 2)}</pre>
        {result !== undefined && (
          <>
            <h4>Result</h4>
            <pre>{pretty(result)}</pre>
          </>
        )}
      </div>
    </details>
  );
}

/**
 * The tools answer JSON ({success, results | summary | message | error}); the line says what came
 * back without opening it.
 */
export function summarize(content: string): string {
  try {
    const value = JSON.parse(content) as Record<string, unknown>;
    if (value.success === false) return `failed: ${String(value.error ?? "error")}`;
    if (Array.isArray(value.results))
      return value.results.length === 0 ? String(value.message ?? "no results") : `${value.results.length} result(s)`;
    if (Array.isArray(value.rows)) return `${value.rows.length} row(s)`;
    for (const key of ["summary", "message", "id"]) if (typeof value[key] === "string") return clip(value[key]);
    return "done";
  } catch {
    return clip(content);
  }
}

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function pretty(content: string): string {
  try {
    return JSON.stringify(JSON.parse(content), null, 2);
  } catch {
    return content;
  }
}
