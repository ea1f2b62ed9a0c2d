import { ToolMessage, type ToolCall } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type * as z from "zod";
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
  const schema = tool.schema as Partial<z.ZodType>;
  if (typeof schema?.safeParse !== "function") return undefined;
  const parsed = schema.safeParse(args);
  if (parsed.success) return undefined;
  const problems = (parsed.error.issues as Issue[]).slice(0, 3).map((i) => explainIssue(i, args));
  return JSON.stringify({
    success: false,
    error: `${tool.name} was not run, so nothing was done: ${problems.join("; ")}. Tell the user plainly; do not retry with the same input.`,
  });
}

/** LangGraph's ToolNode, with invalid tool input answered by explainInvalidInput and tools turned off answered by why. */
export class ExplainingToolNode extends ToolNode {
  constructor(private readonly known: StructuredToolInterface[]) {
    super(known);
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
