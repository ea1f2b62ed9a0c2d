import type { Embeddings } from "@langchain/core/embeddings";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { z } from "zod";
import { plainText, type IntercomClient, type IntercomConversation } from "../../shared/intercom/client";
import type { AgentStore } from "../../shared/stores/agent-store";
import type { OnceMarkers } from "../../shared/stores/once-markers";
import type { ExternalTools } from "./mcp-tools";
import {
  coveragePrompt,
  CoverageJudgement,
  Draft,
  draftPrompt,
  type Gathered,
  Plan,
  planPrompt,
  TOOL_NAMES,
  validatePrompt,
  Validation,
} from "./prompts";
import {
  hopsOf,
  SupportState,
  type ChatLine,
  type SupportStateType,
  type SupportUpdate,
  type ToolResult,
} from "./state";

export interface SupportDeps {
  model: BaseChatModel;
  intercom: IntercomClient;
  /** knowledge base and user context; absent without Supabase */
  store?: AgentStore;
  /** an MCP server's tools, when SUPPORT_MCP_URL is set */
  mcp?: ExternalTools;
  embeddings: Embeddings;
  /** claims each customer part before it is answered, so it is answered at most once */
  answered: OnceMarkers;
  adminId: string;
  snoozeMinutes: number;
  checkpointer: BaseCheckpointSaver;
}

type Node = (state: SupportStateType) => Promise<SupportUpdate>;

/**
 * Every node records its error in state and routes to escalate instead of throwing: the
 * conversation always ends with either a validated reply or a note for a person.
 */
const guarded =
  (name: string, node: Node): Node =>
  async (state) => {
    try {
      return await node(state);
    } catch (err) {
      return {
        error: `${name}: ${(err as Error).message}`,
        escalation_reason: `the ${name} step failed`,
        next_node: "escalate",
      };
    }
  };

const question = (state: SupportStateType) =>
  [...state.messages].reverse().find((m) => m.role === "user")?.content ?? "";

const gatheredOf = (state: SupportStateType): Gathered[] =>
  Object.entries(state.docs_data)
    .filter(([key]) => key.startsWith(`${state.part_id}:`))
    .flatMap(([, value]) => value as Gathered[]);

async function decide<S extends z.ZodType>(
  model: BaseChatModel,
  schema: S,
  name: string,
  prompt: string,
): Promise<z.infer<S>> {
  return schema.parse(await model.withStructuredOutput(schema, { name }).invoke([new HumanMessage(prompt)]));
}

/** Authors whose messages the agent answers; admins, bots and teams are the other side. */
const CUSTOMER_AUTHORS = new Set(["user", "lead", "contact"]);
/** Part types that carry a customer's message ("open": a reply that reopened the conversation). */
const MESSAGE_PARTS = new Set(["comment", "open"]);

/**
 * Why the notified part is not one to answer, or null when it is a customer's message in this
 * conversation. A notification can name a part that does not exist, one of another
 * conversation, or the bot's own reply; answering it would answer the conversation's last
 * customer message, which its own notification answers again.
 */
function notAnswerable(conversation: IntercomConversation, partId: string): string | null {
  const part =
    conversation.source?.id === partId
      ? { part_type: "comment", author: conversation.source.author }
      : conversation.conversation_parts?.conversation_parts?.find((p) => p.id === partId);
  if (!part) return `part ${partId} is not in conversation ${conversation.id}`;
  if (!CUSTOMER_AUTHORS.has(part.author?.type) || !MESSAGE_PARTS.has(part.part_type))
    return `part ${partId} is not a customer's message (${part.part_type} by ${part.author?.type})`;
  return null;
}

export function buildSupportGraph(deps: SupportDeps) {
  const initialize: Node = async (state) => {
    const conversation = await deps.intercom.getConversation(state.conversation_id);
    const ignored = notAnswerable(conversation, state.part_id);
    if (ignored) return { ignored_reason: ignored, response_delivery: "ignored", error: null, next_node: null };
    const lines: ChatLine[] = [];
    const role = (type: string): ChatLine["role"] => (type === "admin" || type === "bot" ? "assistant" : "user");
    if (conversation.source?.body)
      lines.push({ role: role(conversation.source.author.type), content: plainText(conversation.source.body) });
    for (const part of conversation.conversation_parts?.conversation_parts ?? []) {
      // Internal notes and state changes are not part of what the customer and the agent said.
      if (part.part_type !== "comment" || !part.body) continue;
      lines.push({ role: role(part.author.type), content: plainText(part.body) });
    }
    const contactId = conversation.contacts?.contacts?.[0]?.id;
    const email = contactId ? ((await deps.intercom.getContact(contactId)).email ?? null) : null;
    return {
      messages: lines,
      user_email: email,
      admin_id: deps.adminId,
      // An unreachable MCP server costs its tools, not the run.
      available_tools: [
        ...(deps.store ? ["search_knowledge_base", "get_user_context"] : []),
        ...(deps.mcp ? await deps.mcp.names().catch(() => []) : []),
      ],
      current_plan: null,
      current_gather: null,
      draft: null,
      validate: null,
      escalate: null,
      response_delivery: null,
      finalize: null,
      escalation_reason: null,
      ignored_reason: null,
      response: null,
      error: null,
      next_node: "plan",
    };
  };

  const plan: Node = async (state) => {
    const decided = await decide(
      deps.model,
      Plan,
      TOOL_NAMES.plan,
      planPrompt(state.messages, question(state), state.available_tools, hopsOf(state)),
    );
    const calls = decided.tool_calls.filter((c) => state.available_tools.includes(c.tool_name));
    return { current_plan: { user_query: question(state), reasoning: decided.reasoning, tool_calls: calls } };
  };

  const runTool = async (
    state: SupportStateType,
    name: string,
    parameters: Record<string, unknown>,
  ): Promise<unknown> => {
    if (deps.mcp && name !== "search_knowledge_base" && name !== "get_user_context")
      return deps.mcp.call(name, parameters);
    if (!deps.store) throw new Error("no store configured");
    if (name === "search_knowledge_base") {
      const query = String(parameters.query ?? question(state));
      const matches = await deps.store.matchKnowledge({
        text: query,
        embedding: await deps.embeddings.embedQuery(query),
        limit: 5,
      });
      return matches.map((m) => ({ source: m.source, content: m.content }));
    }
    if (name === "get_user_context")
      return state.user_email ? ((await deps.store.getUserContext(state.user_email)) ?? null) : null;
    throw new Error(`unknown tool ${name}`);
  };

  const gather: Node = async (state) => {
    const started = Date.now();
    const hop = hopsOf(state).length + 1;
    const results: ToolResult[] = await Promise.all(
      (state.current_plan?.tool_calls ?? []).map(async (call): Promise<ToolResult> => {
        const t0 = Date.now();
        try {
          const data = await runTool(state, call.tool_name, call.parameters);
          return {
            tool_name: call.tool_name,
            success: true,
            data,
            error: null,
            execution_time_ms: Date.now() - t0,
            timestamp: new Date(t0).toISOString(),
          };
        } catch (err) {
          return {
            tool_name: call.tool_name,
            success: false,
            data: null,
            error: (err as Error).message,
            execution_time_ms: Date.now() - t0,
            timestamp: new Date(t0).toISOString(),
          };
        }
      }),
    );
    const key = (r: ToolResult) => `${state.part_id}:${r.tool_name}:hop${hop}`;
    const ok = results.filter((r) => r.success);
    return {
      current_gather: {
        tool_results: results,
        total_execution_time_ms: Date.now() - started,
        success_rate: results.length ? ok.length / results.length : 0,
      },
      docs_data: Object.fromEntries(
        ok.filter((r) => r.tool_name === "search_knowledge_base").map((r) => [key(r), r.data]),
      ),
      tool_data: Object.fromEntries(
        ok.filter((r) => r.tool_name !== "search_knowledge_base").map((r) => [key(r), r.data]),
      ),
    };
  };

  const coverage: Node = async (state) => {
    const judged = await decide(
      deps.model,
      CoverageJudgement,
      TOOL_NAMES.coverage,
      coveragePrompt(question(state), gatheredOf(state)),
    );
    const number = hopsOf(state).length + 1;
    const next = judged.data_sufficient ? "draft" : number < state.max_hops ? "plan" : "escalate";
    return {
      hops: [
        { part_id: state.part_id, number, plan: state.current_plan!, gather: state.current_gather!, coverage: judged },
      ],
      next_node: next,
      ...(next === "escalate"
        ? {
            escalation_reason: `the data did not cover the question after ${number} hops: ${judged.missing_data.join("; ")}`,
          }
        : {}),
    };
  };

  const draft: Node = async (state) => {
    const written = await decide(deps.model, Draft, TOOL_NAMES.draft, draftPrompt(question(state), gatheredOf(state)));
    if (written.route_to_team || !written.reply.trim()) {
      return { draft: written, next_node: "escalate", escalation_reason: `routed to the team: ${written.reasoning}` };
    }
    return { draft: written, next_node: "validate" };
  };

  const validate: Node = async (state) => {
    const verdict = await decide(
      deps.model,
      Validation,
      TOOL_NAMES.validate,
      validatePrompt(question(state), gatheredOf(state), state.draft!.reply),
    );
    await deps.intercom.reply(
      state.conversation_id,
      deps.adminId,
      "note",
      `Validation ${verdict.valid ? "passed" : "failed"}: ${verdict.reasoning}${verdict.issues.length ? ` Issues: ${verdict.issues.join("; ")}` : ""}`,
    );
    return verdict.valid
      ? { validate: verdict, next_node: "respond" }
      : {
          validate: verdict,
          next_node: "escalate",
          escalation_reason: `the draft failed validation: ${verdict.issues.join("; ")}`,
        };
  };

  const respond: Node = async (state) => {
    // Claimed before sending: a redelivered message finds the part answered and sends nothing.
    if (!(await deps.answered.claim(`intercom-answered#${state.conversation_id}#${state.part_id}`))) {
      return { response_delivery: "duplicate", next_node: "finalize" };
    }
    await deps.intercom.reply(state.conversation_id, deps.adminId, "comment", state.draft!.reply);
    return { response: state.draft!.reply, response_delivery: "sent", next_node: "finalize" };
  };

  const escalate: Node = async (state) => {
    const reason = state.escalation_reason ?? state.error ?? "the agent could not answer";
    const source = state.error ? state.error.split(":")[0]! : (state.next_node ?? "agent");
    await deps.intercom.reply(
      state.conversation_id,
      deps.adminId,
      "note",
      `Escalated to the team. Reason: ${reason} (from: ${source})`,
    );
    return { escalate: { reason, source }, response_delivery: "escalated", next_node: "finalize" };
  };

  const finalize: Node = async (state) => {
    const until = new Date(Date.now() + deps.snoozeMinutes * 60_000);
    try {
      await deps.intercom.snooze(state.conversation_id, deps.adminId, until);
      return { finalize: { status: state.response_delivery ?? "unknown", snoozed_until: until.toISOString() } };
    } catch (err) {
      return {
        finalize: { status: state.response_delivery ?? "unknown", snoozed_until: null },
        error: `finalize: ${(err as Error).message}`,
      };
    }
  };

  // Node names differ from the state fields they fill (draft, validate, escalate, finalize):
  // LangGraph does not allow a node and a channel to share a name.
  const NODE: Record<string, string> = {
    plan: "plan",
    draft: "write_draft",
    validate: "validate_draft",
    respond: "respond",
    escalate: "escalate_to_team",
    finalize: "finish",
  };
  const route = (state: SupportStateType) =>
    NODE[state.error ? "escalate" : (state.next_node ?? "escalate")] ?? "escalate_to_team";
  const onError = (next: string) => (state: SupportStateType) => (state.error ? "escalate_to_team" : next);

  return new StateGraph(SupportState)
    .addNode("initialize", guarded("initialize", initialize))
    .addNode("plan", guarded("plan", plan))
    .addNode("gather", guarded("gather", gather))
    .addNode("coverage", guarded("coverage", coverage))
    .addNode("write_draft", guarded("draft", draft))
    .addNode("validate_draft", guarded("validate", validate))
    .addNode("respond", guarded("respond", respond))
    .addNode("escalate_to_team", async (state) => {
      try {
        return await escalate(state);
      } catch (err) {
        return { error: `escalate: ${(err as Error).message}`, response_delivery: "escalated" as const };
      }
    })
    .addNode("finish", finalize)
    .addEdge(START, "initialize")
    // An ignored part ends the run before anything is said or snoozed.
    .addConditionalEdges(
      "initialize",
      (state) => (state.response_delivery === "ignored" ? END : onError("plan")(state)),
      ["plan", "escalate_to_team", END],
    )
    .addConditionalEdges("plan", onError("gather"), ["gather", "escalate_to_team"])
    .addConditionalEdges("gather", onError("coverage"), ["coverage", "escalate_to_team"])
    .addConditionalEdges("coverage", route, ["plan", "write_draft", "escalate_to_team"])
    .addConditionalEdges("write_draft", route, ["validate_draft", "escalate_to_team"])
    .addConditionalEdges("validate_draft", route, ["respond", "escalate_to_team"])
    .addConditionalEdges("respond", onError("finish"), ["finish", "escalate_to_team"])
    .addEdge("escalate_to_team", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer: deps.checkpointer });
}

export type SupportGraph = ReturnType<typeof buildSupportGraph>;
