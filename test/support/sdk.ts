import { Client } from "@langchain/langgraph-sdk";
import type { LocalStack } from "../../infra/local/stack";

// What the e2e files driving the Agent Server API through LangGraph's own SDK share.

/** One part of a run's stream, as the SDK yields it. */
export type Part = { id?: string; event: string; data: unknown };
/** The chat graph's values, as runs answer them. */
export type Values = { messages: { type: string; content: unknown }[] };

/** The SDK's Client on a local stack, as `user`, retrying nothing: a test sees every answer. */
export const sdkClient = (stack: LocalStack, user: string) =>
  new Client({ apiUrl: stack.url, defaultHeaders: { "x-user-id": user }, callerOptions: { maxRetries: 0 } });

/** A run's input: one human message. */
export const human = (content: string) => ({ messages: [{ type: "human", content }] });

/**
 * A fact for the offline stand-in model to remember, which it repeats back word by word (15 ms a
 * word locally): `times` 20 streams for about 3 s, long enough for a cancel to land mid-run.
 */
export const rememberFact = (times: number) =>
  `Remember that ${"the quarterly review covers pricing, plans, seats and the renewal calendar; ".repeat(times)}`;

/** Each message as "type: first 40 characters", to compare a thread's messages at a glance. */
export const texts = (values: unknown) =>
  (values as Values).messages.map((m) => `${m.type}: ${String(m.content).slice(0, 40)}`);

/** Every part of a stream, once it ended. */
export async function gather(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const part of stream) out.push(part);
  return out;
}
