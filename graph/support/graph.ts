import { END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import {
  coverageNode,
  draftNode,
  escalateNode,
  finalizeNode,
  gatherNode,
  guarded,
  initializeNode,
  NODES,
  type NodeName,
  planNode,
  respondNode,
  type Step,
  type SupportDeps,
  validateNode,
} from "./nodes";
import { SupportState, type SupportStateType } from "./state";

export type { SupportDeps } from "./nodes";

/** The node a recorded next step names; an error always escalates. */
const STEP_NODE: Record<Step, NodeName> = {
  plan: NODES.plan,
  draft: NODES.draft,
  validate: NODES.validate,
  respond: NODES.respond,
  escalate: NODES.escalate,
  finalize: NODES.finalize,
};
const route = (state: SupportStateType): NodeName =>
  state.error ? NODES.escalate : (STEP_NODE[(state.next_node as Step | null) ?? "escalate"] ?? NODES.escalate);
const unlessFailed =
  (next: NodeName) =>
  (state: SupportStateType): NodeName =>
    state.error ? NODES.escalate : next;

/**
 * initialize -> (ignored: end | no text: escalate) -> plan -> gather -> coverage -> (plan again | write_draft | escalate)
 * write_draft -> validate_draft -> respond -> (finish | escalate: a reply whose delivery is unknown);
 * any failure -> escalate_to_team -> finish (which snoozes only an answered conversation).
 * The nodes are module-level factories (nodes.ts); this only wires them.
 */
export function buildSupportGraph(deps: SupportDeps & { checkpointer?: BaseCheckpointSaver }) {
  return (
    new StateGraph(SupportState)
      .addNode(NODES.initialize, guarded("initialize", initializeNode(deps)))
      .addNode(NODES.plan, guarded("plan", planNode(deps)))
      .addNode(NODES.gather, guarded("gather", gatherNode(deps)))
      .addNode(NODES.coverage, guarded("coverage", coverageNode(deps)))
      .addNode(NODES.draft, guarded("draft", draftNode(deps)))
      .addNode(NODES.validate, guarded("validate", validateNode(deps)))
      .addNode(NODES.respond, guarded("respond", respondNode(deps)))
      .addNode(NODES.escalate, escalateNode(deps))
      .addNode(NODES.finalize, finalizeNode(deps))
      .addEdge(START, NODES.initialize)
      // An ignored part (not a customer's message in this conversation, or one a person is handling)
      // ends the run before anything is said or snoozed; a message with no text goes to the team.
      .addConditionalEdges(NODES.initialize, (state) => (state.response_delivery === "ignored" ? END : route(state)), [
        NODES.plan,
        NODES.escalate,
        END,
      ])
      .addConditionalEdges(NODES.plan, unlessFailed(NODES.gather), [NODES.gather, NODES.escalate])
      .addConditionalEdges(NODES.gather, unlessFailed(NODES.coverage), [NODES.coverage, NODES.escalate])
      .addConditionalEdges(NODES.coverage, route, [NODES.plan, NODES.draft, NODES.escalate])
      .addConditionalEdges(NODES.draft, route, [NODES.validate, NODES.escalate])
      .addConditionalEdges(NODES.validate, route, [NODES.respond, NODES.escalate])
      .addConditionalEdges(NODES.respond, route, [NODES.finalize, NODES.escalate])
      .addEdge(NODES.escalate, NODES.finalize)
      .addEdge(NODES.finalize, END)
      .compile({ checkpointer: deps.checkpointer })
  );
}

export type SupportGraph = ReturnType<typeof buildSupportGraph>;

/**
 * The support graph's shape alone, for the Agent Server API's read-only `support` assistant
 * (its graph and schemas). Its runs start from Intercom only, so here nothing is wired: any
 * dependency a node reached would throw, and none runs. Given the workers' checkpointer, it
 * reads the state their runs saved (getState), through the same channels and reducers; drawn
 * without one (the Agent Server API's), it has no state to read.
 */
export function supportGraphShape(checkpointer?: BaseCheckpointSaver): SupportGraph {
  const unwired = new Proxy(
    {},
    {
      get: (_target, key) => {
        throw new Error(`the support graph is only drawn here, never run (a node reached ${String(key)})`);
      },
    },
  );
  // Its own property even when undefined: the unwired prototype throws for any other read.
  return buildSupportGraph(Object.assign(Object.create(unwired), { checkpointer }));
}
