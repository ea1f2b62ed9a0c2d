import type { Embeddings } from "@langchain/core/embeddings";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import type * as z from "../../shared/zod";
import { IntercomError, plainText, type IntercomClient, type IntercomConversation } from "../../shared/intercom/client";
import type { AgentStore } from "../../shared/stores/agent-store";
import type { OnceMarkers } from "../../shared/stores/once-markers";
import { toStorableText } from "../../shared/text";
import { TOOLS } from "../tools/registry";
import { runTool, type AgentTool } from "../tools/tool";
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
import { hopsOf, type ChatLine, type SupportStateType, type SupportUpdate, type ToolResult } from "./state";
// The offline stand-in's answers to this agent's structured outputs, registered by name.
import "./offline-rules";

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
}

/** The graph's nodes, by name. A node and a state channel may not share a name in LangGraph. */
export const NODES = {
  initialize: "initialize",
  plan: "plan",
  gather: "gather",
  coverage: "coverage",
  draft: "write_draft",
  validate: "validate_draft",
  respond: "respond",
  escalate: "escalate_to_team",
  finalize: "finish",
} as const;
export type NodeName = (typeof NODES)[keyof typeof NODES];

/** Where a node sends the run next, as it records it in `next_node`. */
export type Step = "plan" | "draft" | "validate" | "respond" | "escalate" | "finalize";

/** A node of the support graph; LangGraph hands it the run's config, whose signal stops the run at its deadline. */
export type Node = (
  state: SupportStateType,
  config?: { signal?: AbortSignal },
) => Promise<SupportUpdate & { next_node?: Step | null }>;

/** The registry's tools a support conversation can use: those that gather passages or facts about the customer. */
export const SUPPORT_TOOLS: AgentTool[] = TOOLS.filter((tool) => tool.gathers !== undefined);

const question = (state: SupportStateType) =>
  [...state.messages].reverse().find((m) => m.role === "user")?.content ?? "";

/** What the customer's question has gathered from passage tools this turn. */
export const gatheredOf = (state: SupportStateType): Gathered[] =>
  Object.entries(state.docs_data)
    .filter(([key]) => key.startsWith(`${state.part_id}:`))
    .flatMap(([, value]) => value as Gathered[]);

async function decide<S extends z.ZodMiniType>(
  model: BaseChatModel,
  schema: S,
  name: string,
  prompt: string,
): Promise<z.infer<S>> {
  return schema.parse(await model.withStructuredOutput(schema, { name }).invoke([new HumanMessage(prompt)]));
}

/**
 * Every node records its error in state and routes to escalate instead of throwing: the
 * conversation always ends with either a validated reply or a note for a person. Except Intercom
 * failing for a while (a 429 past the client's retries, a read it could not answer): that fails
 * the delivery, which SQS tries again later, since a person is not needed for an outage.
 */
export const guarded =
  (name: string, node: Node): Node =>
  async (state, config) => {
    try {
      return await node(state, config);
    } catch (err) {
      if (err instanceof IntercomError && err.retriable) throw err;
      return {
        error: `${name}: ${(err as Error).message}`,
        escalation_reason: `the ${name} step failed`,
        next_node: "escalate",
      };
    }
  };

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

/**
 * Why the bot should stay out of the conversation, or null when it may answer: a person is in it.
 * A teammate who replied or noted, or who was assigned it, is handling it. A second voice beside
 * theirs would answer over them, and its snooze would hide the conversation from their inbox. An
 * escalation alone does not shut the bot out: the customer's next question (after a "Thanks!" it
 * handed over, or a screenshot) is answered until a person steps in.
 */
function personInCharge(deps: SupportDeps, conversation: IntercomConversation): string | null {
  const assignee = conversation.admin_assignee_id;
  if (assignee && String(assignee) !== deps.adminId) return `the conversation is assigned to teammate ${assignee}`;
  const teammate = conversation.conversation_parts?.conversation_parts?.find(
    (p) => p.author?.type === "admin" && p.author.id !== deps.adminId && TEAM_PARTS.has(p.part_type),
  );
  if (teammate) return `teammate ${teammate.author.id} has written in the conversation`;
  return null;
}

/** A teammate's parts that show they are handling the conversation (closing one tidies an inbox, and says nothing). */
const TEAM_PARTS = new Set(["comment", "note"]);

export const initializeNode =
  (deps: SupportDeps): Node =>
  async (state, config) => {
    const conversation = await deps.intercom.getConversation(state.conversation_id, config?.signal);
    const ignored = notAnswerable(conversation, state.part_id) ?? personInCharge(deps, conversation);
    if (ignored) return { ignored_reason: ignored, response_delivery: "ignored", error: null, next_node: null };
    // What was said up to the notified part, which the run answers: a message the customer wrote
    // after it has a notification (and a run) of its own.
    const source = conversation.source && { ...conversation.source, part_type: "comment" };
    const parts = [...(source ? [source] : []), ...(conversation.conversation_parts?.conversation_parts ?? [])];
    const said = parts.slice(0, parts.findIndex((p) => p.id === state.part_id) + 1);
    const role = (type: string): ChatLine["role"] => (type === "admin" || type === "bot" ? "assistant" : "user");
    // Internal notes and state changes are not part of what the customer and the agent said.
    const lines: ChatLine[] = said
      .filter((part) => MESSAGE_PARTS.has(part.part_type))
      // Made storable here (a NUL or lone surrogate from Intercom would fail every search's query).
      .map((part) => ({ role: role(part.author.type), content: toStorableText(plainText(part.body)) }))
      .filter((line) => line.content !== "");
    const asked = toStorableText(plainText(said.at(-1)?.body)).trim();
    const contactId = conversation.contacts?.contacts?.[0]?.id;
    const contact = contactId ? await deps.intercom.getContact(contactId, config?.signal) : undefined;
    // The email is who the customer is to user context only for a user the product identified: a
    // lead's email is whatever the visitor typed, and anyone could type a customer's.
    const email = contact?.role === "user" ? (contact.email ?? null) : null;
    const reset = {
      messages: lines,
      user_email: email,
      admin_id: deps.adminId,
      // An unreachable MCP server costs its tools, not the run.
      available_tools: [] as string[],
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
    };
    // A message of an attachment or an image alone: nothing to look up, and the question before it
    // was answered by its own run. A person looks at it.
    if (!asked)
      return {
        ...reset,
        escalation_reason: "the message has no text to answer (an attachment or image alone)",
        next_node: "escalate",
      };
    // Listed only for a message to plan for: an unreachable MCP server costs its tools, not the run.
    const tools = [
      ...(deps.store ? SUPPORT_TOOLS.map((t) => t.name) : []),
      ...(deps.mcp ? await deps.mcp.names().catch(() => []) : []),
    ];
    return { ...reset, available_tools: tools, next_node: "plan" };
  };

export const planNode =
  (deps: SupportDeps): Node =>
  async (state) => {
    const decided = await decide(
      deps.model,
      Plan,
      TOOL_NAMES.plan,
      planPrompt(state.messages, question(state), state.available_tools, hopsOf(state)),
    );
    const calls = decided.tool_calls.filter((c) => state.available_tools.includes(c.tool_name));
    return { current_plan: { user_query: question(state), reasoning: decided.reasoning, tool_calls: calls } };
  };

/**
 * One planned call: a registry tool, scoped to the customer (their email is who they are to the
 * knowledge base and user context), or an MCP server's tool. A registry tool's failure is data
 * for coverage, not an exception.
 */
async function callTool(deps: SupportDeps, state: SupportStateType, name: string, parameters: Record<string, unknown>) {
  const tool = SUPPORT_TOOLS.find((t) => t.name === name);
  if (!tool) {
    if (deps.mcp) return { data: await deps.mcp.call(name, parameters), gathers: "facts" as const };
    throw new Error(`unknown tool ${name}`);
  }
  if (!deps.store) throw new Error("no store configured");
  if (tool.gathers === "facts" && !state.user_email) return { data: null, gathers: tool.gathers };
  const output = await runTool(
    tool,
    // The question as a default query, within what a query may be (a search refuses a longer one).
    { query: toStorableText(question(state).slice(0, 1000)), ...parameters },
    {
      scope: { userId: state.user_email ?? "", projectId: null, sessionId: null },
      deps: { store: deps.store, embeddings: deps.embeddings, minMemoryScore: 0 },
    },
  );
  if (output.success === false) throw new Error(String(output.error));
  const data =
    tool.gathers === "passages"
      ? ((output.results as Gathered[] | undefined) ?? []).map(({ source, content }) => ({ source, content }))
      : (output.summary ?? output);
  return { data, gathers: tool.gathers };
}

export const gatherNode =
  (deps: SupportDeps): Node =>
  async (state) => {
    const started = Date.now();
    const hop = hopsOf(state).length + 1;
    const results = await Promise.all(
      (state.current_plan?.tool_calls ?? []).map(async (call) => {
        const t0 = Date.now();
        const timing = () => ({ execution_time_ms: Date.now() - t0, timestamp: new Date(t0).toISOString() });
        try {
          const { data, gathers } = await callTool(deps, state, call.tool_name, call.parameters);
          const result: ToolResult = { tool_name: call.tool_name, success: true, data, error: null, ...timing() };
          return { result, gathers };
        } catch (err) {
          const result: ToolResult = {
            tool_name: call.tool_name,
            success: false,
            data: null,
            error: (err as Error).message,
            ...timing(),
          };
          return { result, gathers: undefined };
        }
      }),
    );
    const key = (r: ToolResult) => `${state.part_id}:${r.tool_name}:hop${hop}`;
    const ok = results.filter((r) => r.result.success);
    return {
      current_gather: {
        tool_results: results.map((r) => r.result),
        total_execution_time_ms: Date.now() - started,
        success_rate: results.length ? ok.length / results.length : 0,
      },
      docs_data: Object.fromEntries(
        ok.filter((r) => r.gathers === "passages").map((r) => [key(r.result), r.result.data]),
      ),
      tool_data: Object.fromEntries(
        ok.filter((r) => r.gathers !== "passages").map((r) => [key(r.result), r.result.data]),
      ),
    };
  };

export const coverageNode =
  (deps: SupportDeps): Node =>
  async (state) => {
    const judged = await decide(
      deps.model,
      CoverageJudgement,
      TOOL_NAMES.coverage,
      coveragePrompt(question(state), gatheredOf(state)),
    );
    const number = hopsOf(state).length + 1;
    const next: Step = judged.data_sufficient ? "draft" : number < state.max_hops ? "plan" : "escalate";
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

export const draftNode =
  (deps: SupportDeps): Node =>
  async (state) => {
    const written = await decide(deps.model, Draft, TOOL_NAMES.draft, draftPrompt(question(state), gatheredOf(state)));
    if (written.route_to_team || !written.reply.trim()) {
      return { draft: written, next_node: "escalate", escalation_reason: `routed to the team: ${written.reasoning}` };
    }
    return { draft: written, next_node: "validate" };
  };

export const validateNode =
  (deps: SupportDeps): Node =>
  async (state, config) => {
    const verdict = await decide(
      deps.model,
      Validation,
      TOOL_NAMES.validate,
      validatePrompt(question(state), gatheredOf(state), state.draft!.reply),
    );
    // Marked once posted: a redelivery that runs the graph again does not note it twice (one that
    // died between the two notes it again, which the team can bear better than no note).
    const noted = `${answeredKey(state)}#validation-note`;
    if (!(await deps.answered.claimed(noted))) {
      await deps.intercom.reply(
        state.conversation_id,
        deps.adminId,
        "note",
        `Validation ${verdict.valid ? "passed" : "failed"}: ${verdict.reasoning}${verdict.issues.length ? ` Issues: ${verdict.issues.join("; ")}` : ""}`,
        config?.signal,
      );
      await deps.answered.claim(noted);
    }
    return verdict.valid
      ? { validate: verdict, next_node: "respond" }
      : {
          validate: verdict,
          next_node: "escalate",
          escalation_reason: `the draft failed validation: ${verdict.issues.join("; ")}`,
        };
  };

export const respondNode =
  (deps: SupportDeps): Node =>
  async (state, config) => {
    // Claimed before sending, and marked sent once Intercom took it: a redelivered message finds
    // the part answered and sends nothing. One claimed by a delivery that stopped before Intercom
    // answered (its process died mid-request) may or may not have reached the customer: it is not
    // sent again, and the team is told instead of the part being dropped.
    const key = answeredKey(state);
    // Handed to the team by an earlier attempt: a person answers it, not a second voice.
    if (await deps.answered.claimed(`${key}#escalated`))
      return { next_node: "escalate", escalation_reason: "an earlier attempt handed this part to the team" };
    if (!(await deps.answered.claim(key, SENT_IS_MARKED))) {
      // A claim made before sends were marked (an earlier version's) counts as answered, as it did then.
      const claim = await deps.answered.markOf(key);
      if (claim?.note !== SENT_IS_MARKED || (await deps.answered.claimed(`${key}#sent`)))
        return { response_delivery: "duplicate", next_node: "finalize" };
      return {
        next_node: "escalate",
        escalation_reason:
          "an earlier attempt to answer stopped before Intercom confirmed its reply, which may not have reached the customer",
      };
    }
    try {
      await deps.intercom.reply(state.conversation_id, deps.adminId, "comment", state.draft!.reply, config?.signal);
    } catch (err) {
      // Refused before Intercom acted (429): nothing reached the customer, and the retry may send it.
      if (err instanceof IntercomError && err.retriable) await deps.answered.release(key);
      throw err;
    }
    await deps.answered.claim(`${key}#sent`);
    return { response: state.draft!.reply, response_delivery: "sent", next_node: "finalize" };
  };

/** The note on a part's claim saying its reply, once Intercom takes it, is marked `#sent`. */
const SENT_IS_MARKED = "sent-is-marked";

/** The once-marker of a customer part: claimed before it is answered (SupportDeps.answered). */
const answeredKey = (state: SupportStateType) => `intercom-answered#${state.conversation_id}#${state.part_id}`;

/**
 * Notes the reason for a person, marking the part as handed to the team first: a later attempt
 * (a redelivery) then sends no reply of its own beside the person's (respondNode). A note that
 * cannot be posted for now (Intercom failing past the client's retries, or unreachable) fails the
 * delivery, so the message is tried again and then dead-lettered (an alarm): snoozing without it
 * would leave the customer with neither a reply nor a person. One Intercom refuses for good (4xx:
 * the conversation is gone) is recorded and the conversation snoozed, as no retry would help.
 */
export const escalateNode =
  (deps: SupportDeps): Node =>
  async (state, config) => {
    const reason = state.escalation_reason ?? state.error ?? "the agent could not answer";
    const source = state.error ? state.error.split(":")[0]! : (state.next_node ?? "agent");
    const handedOver = `${answeredKey(state)}#escalated`;
    const mine = await deps.answered.claim(handedOver);
    try {
      await deps.intercom.reply(
        state.conversation_id,
        deps.adminId,
        "note",
        `Escalated to the team. Reason: ${reason} (from: ${source})`,
        config?.signal,
      );
    } catch (err) {
      // Only a conversation that is gone is refused for good. Any other refusal (401 or 403: a
      // revoked or rotated token) fails the delivery, to be retried and then dead-lettered (an
      // alarm), rather than every message being dropped without a word while it lasts.
      const refused = err instanceof IntercomError && err.status === 404;
      if (refused) return { error: `escalate: ${err.message}`, response_delivery: "escalated" };
      // Handed to nobody for certain (refused before Intercom acted: a 429, a 401 or 403): the
      // retry decides afresh. After a 5xx or no answer the note may have been posted, so the
      // hand-off stays and the retry notes the team again; an earlier attempt's hand-off stays too.
      const notPosted = err instanceof IntercomError && [429, 401, 403].includes(err.status);
      if (mine && notPosted) await deps.answered.release(handedOver);
      throw new Error(`escalate: the note to the team could not be posted: ${(err as Error).message}`, { cause: err });
    }
    return { escalate: { reason, source }, response_delivery: "escalated", next_node: "finalize" };
  };

/**
 * Snoozes a conversation the bot answered, until the customer writes again. One handed to the team
 * is left open: a snoozed conversation is out of the team's inbox until the snooze ends.
 */
export const finalizeNode =
  (deps: SupportDeps): Node =>
  async (state, config) => {
    const answered = state.response_delivery === "sent" || state.response_delivery === "duplicate";
    if (!answered) return { finalize: { status: state.response_delivery ?? "unknown", snoozed_until: null } };
    const until = new Date(Date.now() + deps.snoozeMinutes * 60_000);
    try {
      await deps.intercom.snooze(state.conversation_id, deps.adminId, until, config?.signal);
      return { finalize: { status: state.response_delivery ?? "unknown", snoozed_until: until.toISOString() } };
    } catch (err) {
      return {
        finalize: { status: state.response_delivery ?? "unknown", snoozed_until: null },
        error: `finalize: ${(err as Error).message}`,
      };
    }
  };
