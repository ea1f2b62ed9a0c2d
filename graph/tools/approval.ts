import { AIMessage, type ToolCall, ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import * as z from "../../shared/zod";
import { ApproveTools } from "../../shared/session-settings";
import { storableText } from "../../shared/text";

/**
 * Tools whose calls wait for a person's approval: the run's `configurable.approve_tools` (an
 * assistant's configuration, or a run's own), tool names or "*" for every tool. A call that needs
 * it stops the run with an interrupt in the human-in-the-loop format of LangChain's
 * humanInTheLoopMiddleware (what Agent Chat UI shows and answers): `{action_requests,
 * review_configs}`; the run resumes with `{decisions}`, one per call, each approving, editing or
 * rejecting it.
 */
export const APPROVE_TOOLS = "approve_tools";

export { ApproveTools };

/** Approvals asked from more than one place (the session, the assistant, the run): any of them counts. */
export function combinedApproval(...asked: unknown[]): string[] | "*" | undefined {
  const parsed = asked.map((a) => ApproveTools.safeParse(a)).flatMap((p) => (p.success ? [p.data] : []));
  if (parsed.includes("*")) return "*";
  const names = [...new Set(parsed.flatMap((p) => p as string[]))];
  return names.length > 0 ? names : undefined;
}

export function needsApproval(config: LangGraphRunnableConfig | undefined): (toolName: string) => boolean {
  const parsed = ApproveTools.safeParse(config?.configurable?.[APPROVE_TOOLS]);
  if (!parsed.success) return () => false;
  return parsed.data === "*" ? () => true : (name) => parsed.data.includes(name);
}

export type Decision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

const DecisionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("approve") }),
  z.object({
    type: z.literal("edit"),
    edited_action: z.object({ name: storableText({ min: 1, max: 128 }), args: z.record(z.string(), z.unknown()) }),
  }),
  z.object({ type: z.literal("reject"), message: z.optional(storableText({ max: 2000 })) }),
]);
/** What a resume of an approval brings: a decision per call asked about (checked at the API's edge). */
export const ApprovalResume = z.object({ decisions: z.array(DecisionSchema).check(z.maxLength(64)) });

const DECISIONS = ["approve", "edit", "reject"] as const;

/** The interrupt's value: what is asked, in humanInTheLoopMiddleware's format. */
export function approvalRequest(calls: ToolCall[]) {
  return {
    action_requests: calls.map((call) => ({
      name: call.name,
      args: call.args,
      description: `Tool execution requires approval\n\nTool: ${call.name}\nArgs: ${JSON.stringify(call.args, null, 2)}`,
    })),
    review_configs: calls.map((call) => ({ action_name: call.name, allowed_decisions: [...DECISIONS] })),
  };
}

/**
 * The answer a resume brought, checked against the calls asked about (one decision each, in order,
 * an edit keeping its tool): the decisions, or why they do not answer the request.
 */
export function decisionsFor(calls: ToolCall[], resume: unknown): Decision[] | string {
  const parsed = ApprovalResume.safeParse(resume);
  if (!parsed.success) return `the answer is not a decision list (${parsed.error.issues[0]?.message ?? "invalid"})`;
  const decisions = parsed.data.decisions as Decision[];
  if (decisions.length !== calls.length)
    return `${decisions.length} decisions for ${calls.length} tool call${calls.length === 1 ? "" : "s"}: answer one per call`;
  const renamed = decisions.findIndex((d, i) => d.type === "edit" && d.edited_action.name !== calls[i]!.name);
  if (renamed >= 0) return `decision ${renamed} edits the call of ${calls[renamed]!.name} into another tool`;
  return decisions;
}

/**
 * The decisions applied: the AI message with edited calls' new arguments (same id, so it replaces
 * the one in the state, and the history shows what ran), and each rejected call answered, never run.
 */
export function applyDecisions(message: AIMessage, calls: ToolCall[], decisions: Decision[]) {
  const byId = new Map(calls.map((call, i) => [call.id, decisions[i]!]));
  const toolCalls = (message.tool_calls ?? []).map((call) => {
    const decision = byId.get(call.id);
    return decision?.type === "edit" ? { ...call, args: decision.edited_action.args } : call;
  });
  const edited = decisions.some((d) => d.type === "edit")
    ? new AIMessage({
        id: message.id,
        content: message.content,
        tool_calls: toolCalls,
        additional_kwargs: message.additional_kwargs,
        response_metadata: message.response_metadata,
        ...(message.usage_metadata ? { usage_metadata: message.usage_metadata } : {}),
      })
    : undefined;
  const rejections = calls.flatMap((call, i) => {
    const decision = decisions[i]!;
    if (decision.type !== "reject") return [];
    return [
      new ToolMessage({
        status: "error",
        name: call.name,
        tool_call_id: call.id ?? "",
        content: JSON.stringify({
          success: false,
          error: `The user rejected this call of ${call.name}; it was not run.${decision.message ? ` Their note: ${decision.message}` : ""}`,
        }),
      }),
    ];
  });
  return { message: edited ?? message, edited: edited !== undefined, rejections };
}
