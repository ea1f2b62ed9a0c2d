import { type FormEvent, useState } from "react";
// The server's own type (type-only: nothing of the server is bundled into the page).
import type { Decision } from "../../../../graph/tools/approval";

export type { Decision };

/**
 * What a run that stopped for approval asks, in the format of LangChain's humanInTheLoopMiddleware
 * (graph/tools/approval.ts): one request per tool call, each allowing some decisions.
 */
export interface ApprovalRequest {
  action_requests: {
    name: string;
    args: Record<string, unknown>;
    description?: string;
  }[];
  review_configs?: {
    action_name: string;
    allowed_decisions: Decision["type"][];
  }[];
}

export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  return Array.isArray((value as ApprovalRequest | null)?.action_requests);
}

interface Choice {
  type: Decision["type"];
  args: string;
  note: string;
}

/**
 * The calls waiting for approval, each approved, edited (its arguments as JSON) or rejected (with
 * an optional note for the model); one answer for all of them resumes the run.
 */
export function Approval({
  request,
  onDecide,
  disabled,
}: {
  request: ApprovalRequest;
  onDecide: (decisions: Decision[]) => void;
  disabled: boolean;
}) {
  const [choices, setChoices] = useState<Choice[]>(() =>
    request.action_requests.map((action) => ({
      type: "approve",
      args: JSON.stringify(action.args, null, 2),
      note: "",
    })),
  );
  const [problem, setProblem] = useState<string>();
  const choose = (index: number, change: Partial<Choice>) =>
    setChoices((prev) => prev.map((c, i) => (i === index ? { ...c, ...change } : c)));

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const decisions: Decision[] = [];
    for (const [i, choice] of choices.entries()) {
      const action = request.action_requests[i]!;
      if (choice.type === "approve") decisions.push({ type: "approve" });
      else if (choice.type === "reject")
        decisions.push({
          type: "reject",
          ...(choice.note.trim() ? { message: choice.note.trim() } : {}),
        });
      else {
        const args = parseArgs(choice.args);
        if (!args) return setProblem(`The arguments of ${action.name} are not a JSON object.`);
        decisions.push({
          type: "edit",
          edited_action: { name: action.name, args },
        });
      }
    }
    setProblem(undefined);
    onDecide(decisions);
  };

  return (
    <form className="approval" onSubmit={onSubmit} aria-labelledby="approval-heading" data-testid="approval">
      <h3 id="approval-heading">Waiting for your approval</h3>
      {request.action_requests.map((action, i) => {
        const choice = choices[i]!;
        const allowed = request.review_configs?.find((r) => r.action_name === action.name)?.allowed_decisions ?? [
          "approve",
          "edit",
          "reject",
        ];
        const id = `approval-${i}`;
        return (
          <fieldset key={id} className="approval-call">
            <legend>
              <span className="tool-name">{action.name}</span>
            </legend>
            {allowed.map((type) => (
              <label key={type}>
                <input
                  type="radio"
                  name={id}
                  value={type}
                  checked={choice.type === type}
                  onChange={() => choose(i, { type })}
                />
                {LABELS[type]}
              </label>
            ))}
            <label htmlFor={`${id}-args`}>Arguments of {action.name}</label>
            <textarea
              id={`${id}-args`}
              rows={4}
              value={choice.args}
              readOnly={choice.type !== "edit"}
              onChange={(e) => choose(i, { args: e.target.value })}
            />
            {choice.type === "reject" && (
              <>
                <label htmlFor={`${id}-note`}>Note for the agent (optional)</label>
                <input
                  id={`${id}-note`}
                  value={choice.note}
                  maxLength={2000}
                  onChange={(e) => choose(i, { note: e.target.value })}
                />
              </>
            )}
          </fieldset>
        );
      })}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <button type="submit" disabled={disabled}>
        Send decision{choices.length > 1 ? "s" : ""}
      </button>
    </form>
  );
}

const LABELS: Record<Decision["type"], string> = {
  approve: "Approve",
  edit: "Edit arguments",
  reject: "Reject",
};

function parseArgs(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
