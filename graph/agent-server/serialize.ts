import { type BaseMessage, isBaseMessage, isBaseMessageChunk } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";

// By name, not constructor.name: a minified bundle renames classes.
const CHUNK_TYPE: Record<string, string> = {
  ai: "AIMessageChunk",
  human: "HumanMessageChunk",
  tool: "ToolMessageChunk",
  system: "SystemMessageChunk",
};

/**
 * A LangChain message as the Agent Server API sends it: flat, with `type` "human", "ai", "tool"
 * or "system" (and "AIMessageChunk" for a streamed piece), the shape the SDK's `useStream`
 * merges and renders.
 */
export function messageDict(message: BaseMessage): Record<string, unknown> {
  const { data } = message.toDict() as unknown as { data: Record<string, unknown> };
  const type = isBaseMessageChunk(message) ? (CHUNK_TYPE[message.getType()] ?? message.getType()) : message.getType();
  return { ...data, type, id: message.id ?? data.id ?? null };
}

/** Graph state values with every message made a dict; the rest is plain JSON already. */
export function valuesDict(values: unknown): unknown {
  if (isBaseMessage(values)) return messageDict(values);
  if (Array.isArray(values)) return values.map(valuesDict);
  if (values && typeof values === "object" && Object.getPrototypeOf(values) === Object.prototype)
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, valuesDict(v)]));
  return values;
}

/** A checkpoint as the API names it. */
function checkpointOf(config: StateSnapshot["config"] | undefined) {
  const c = config?.configurable;
  if (!c?.checkpoint_id) return null;
  return { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "", checkpoint_id: c.checkpoint_id };
}

/** A thread's state at a checkpoint (`ThreadState` in the SDK's types). */
export function threadState(snapshot: StateSnapshot) {
  return {
    values: valuesDict(snapshot.values),
    next: snapshot.next,
    checkpoint: checkpointOf(snapshot.config),
    metadata: snapshot.metadata ?? null,
    created_at: snapshot.createdAt ?? null,
    parent_checkpoint: checkpointOf(snapshot.parentConfig),
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error ? String(task.error) : null,
      interrupts: task.interrupts ?? [],
      checkpoint: null,
      state: null,
      result: task.result === undefined ? null : valuesDict(task.result),
    })),
  };
}
