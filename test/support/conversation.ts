import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const WORDS = (
  "the a to of and in is for on that with as it be this are by from at or an was have not can " +
  "agent memory session reply user project order refund invoice plan billing account support ticket " +
  "shipping delivery address password reset login error timeout upgrade downgrade cancel renew " +
  "monday friday week month year price discount team workspace export import report dashboard " +
  "please thanks could would should maybe today tomorrow yesterday again still already never always"
).split(" ");

/** Deterministic text of about `bytes` bytes: real-looking words, so it compresses like prose. */
export function prose(seed: number, bytes = 500): string {
  let x = (seed * 2654435761) >>> 0 || 1;
  const out: string[] = [];
  let len = 0;
  while (len < bytes) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const w = WORDS[x % WORDS.length]!;
    out.push(w);
    len += w.length + 1;
  }
  return out.join(" ").slice(0, bytes);
}

/**
 * A one-node MessagesAnnotation graph whose node answers with one AI message: the
 * shape of a chat turn without a model. Each invoke is one turn: 1 human + 1 AI message.
 */
export function echoGraph(checkpointer: BaseCheckpointSaver, bytes = 500) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [new AIMessage(prose(state.messages.length * 7919 + 1, bytes))] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer });
}

export function humanTurn(turn: number, bytes = 500) {
  return { messages: [new HumanMessage(prose(turn, bytes))] };
}
