import { type AIMessage, type BaseMessage, isAIMessage, ToolMessage, type ToolCall } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type * as z from "../../shared/zod";
import { applyDecisions, approvalRequest, decisionsFor, needsApproval } from "../tools/approval";
import { settingsOf, whyOff } from "../tools/groups";

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  maximum?: number | bigint;
  minimum?: number | bigint;
  origin?: string;
  expected?: string;
}

const valueAt = (args: unknown, path: PropertyKey[]) =>
  path.reduce<unknown>(
    (v, key) => (v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined),
    args,
  );

/** One zod issue as a short sentence a model can pass on to the user. */
function explainIssue(issue: Issue, args: unknown): string {
  const name = issue.path.map(String).join(".") || "the input";
  const value = valueAt(args, issue.path);
  if (issue.code === "too_big" && issue.origin === "string" && typeof value === "string")
    return `${name} is too long: ${[...value].length} characters, and the limit is ${issue.maximum}`;
  if (issue.code === "too_big" && issue.origin === "array" && Array.isArray(value))
    return `${name} has ${value.length} items, and the limit is ${issue.maximum}`;
  if (issue.code === "too_big") return `${name} is over the limit of ${issue.maximum}`;
  if (issue.code === "too_small" && issue.origin === "string") return `${name} is empty`;
  if (issue.code === "too_small") return `${name} is under the minimum of ${issue.minimum}`;
  if (issue.code === "invalid_type")
    return `${name} must be ${issue.expected === "array" ? "a list" : `a ${issue.expected}`}`;
  return `${name} ${issue.message}`;
}

/**
 * The tool's input, as the tool would see it, or a short explanation of what is wrong with it.
 * zod's own message (a JSON dump of issues) followed by ToolNode's "Please fix your mistakes"
 * reached users verbatim; this is what the model gets instead, with `success: false` like every
 * other tool failure here (graph/chat/tools/context.ts).
 */
export function explainInvalidInput(tool: StructuredToolInterface, args: unknown): string | undefined {
  const schema = tool.schema as Partial<z.ZodMiniType>;
  if (typeof schema?.safeParse !== "function") return undefined;
  const parsed = schema.safeParse(args);
  if (parsed.success) return undefined;
  const problems = (parsed.error.issues as Issue[]).slice(0, 3).map((i) => explainIssue(i, args));
  return JSON.stringify({
    success: false,
    error: `${tool.name} was not run, so nothing was done: ${problems.join("; ")}. Tell the user plainly; do not retry with the same input.`,
  });
}

/**
 * LangGraph's ToolNode, with invalid tool input answered by explainInvalidInput, tools turned off
 * answered by why, and calls of the tools the run says need approval (../tools/approval.ts)
 * waiting for it: the node stops with an interrupt before any of the step's calls runs, and on
 * resume runs the approved and edited ones, answering the rejected ones.
 */
export class ExplainingToolNode extends ToolNode {
  constructor(private readonly known: StructuredToolInterface[]) {
    super(known);
  }

  protected override async run(input: unknown, config: LangGraphRunnableConfig) {
    const messages = (input as { messages?: BaseMessage[] }).messages;
    const at = messages ? messages.findLastIndex((m) => isAIMessage(m)) : -1;
    if (!messages || at < 0) return super.run(input, config);
    const message = messages[at] as AIMessage;
    const answered = new Set(
      messages.filter((m) => m.getType() === "tool").map((m) => (m as ToolMessage).tool_call_id),
    );
    const approval = needsApproval(config);
    const gated = (message.tool_calls ?? []).filter((call) => !answered.has(call.id ?? "") && approval(call.name));
    if (gated.length === 0) return super.run(input, config);
    // First in the node: on resume LangGraph runs the node again from here, the answer in hand. An
    // answer that does not fit the request asks again, saying why (LangGraph's way to check human
    // input: each interrupt() in a node takes its own resume, so a wrong one is never read twice).
    let decisions = decisionsFor(gated, interrupt(approvalRequest(gated)));
    while (typeof decisions === "string")
      decisions = decisionsFor(gated, interrupt({ ...approvalRequest(gated), error: decisions }));
    const applied = applyDecisions(message, gated, decisions);
    const ran = (await super.run(
      {
        ...(input as object),
        messages: [...messages.slice(0, at), applied.message, ...messages.slice(at + 1), ...applied.rejections],
      },
      config,
    )) as { messages: BaseMessage[] };
    return { messages: [...(applied.edited ? [applied.message] : []), ...applied.rejections, ...ran.messages] };
  }

  protected override async runTool(call: ToolCall, config: LangGraphRunnableConfig, state: unknown) {
    const tool = this.known.find((t) => t.name === call.name);
    // A tool the session's settings turn off is not bound, but a model can still name it (from
    // the history, or unprompted): it is answered, not run.
    const off = tool && whyOff(tool, settingsOf(config));
    if (off) {
      return new ToolMessage({
        status: "error",
        name: call.name,
        tool_call_id: call.id ?? "",
        content: JSON.stringify({ success: false, error: off }),
      });
    }
    const explanation = tool && explainInvalidInput(tool, call.args);
    if (explanation)
      return new ToolMessage({ status: "error", name: call.name, tool_call_id: call.id ?? "", content: explanation });
    return super.runTool(call, config, state);
  }
}
