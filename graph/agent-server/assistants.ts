import { createHash } from "node:crypto";
import { notFound } from "../../shared/errors";

/** The graphs this deployment serves: `chat` runs; `support` is shown but runs from Intercom only. */
export const GRAPHS = {
  chat: { description: "The chat agent: memory, knowledge base and tools, one thread per session.", runnable: true },
  support: {
    description: "The Intercom support agent. Read-only here: its runs start from Intercom's webhooks.",
    runnable: false,
  },
} as const;
export type GraphId = keyof typeof GRAPHS;

// A graph's assistant id is a name-based uuid5 of its graph id, as LangGraph Platform derives its
// default assistants' ids: stable across deployments. Hand-written: Node has no uuid5.
const NAMESPACE = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
export function assistantIdOf(graphId: string): string {
  const hash = createHash("sha1")
    .update(Buffer.from(NAMESPACE.replaceAll("-", ""), "hex"))
    .update(graphId)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// The deployment's graphs do not change while it runs: their assistants' timestamps are fixed.
const DEPLOYED_AT = new Date(0).toISOString();

/** The assistant an id names: its graph id or its assistant id. */
export function graphOf(assistantId: string): GraphId {
  for (const graphId of Object.keys(GRAPHS) as GraphId[])
    if (assistantId === graphId || assistantId === assistantIdOf(graphId)) return graphId;
  throw notFound("assistant_not_found", `no assistant "${assistantId.slice(0, 64)}"`);
}

export function assistant(graphId: GraphId) {
  return {
    assistant_id: assistantIdOf(graphId),
    graph_id: graphId,
    name: graphId,
    description: GRAPHS[graphId].description,
    config: {},
    context: {},
    metadata: { created_by: "system", read_only: !GRAPHS[graphId].runnable },
    version: 1,
    created_at: DEPLOYED_AT,
    updated_at: DEPLOYED_AT,
  };
}

export interface AssistantQuery {
  graph_id?: string;
  name?: string;
  metadata?: Record<string, unknown>;
  limit: number;
  offset: number;
}

export function searchAssistants(query: AssistantQuery) {
  return (Object.keys(GRAPHS) as GraphId[])
    .map(assistant)
    .filter((a) => query.graph_id === undefined || a.graph_id === query.graph_id)
    .filter((a) => query.name === undefined || a.name.includes(query.name))
    .filter((a) =>
      Object.entries(query.metadata ?? {}).every(
        ([k, v]) => JSON.stringify((a.metadata as Record<string, unknown>)[k]) === JSON.stringify(v),
      ),
    )
    .slice(query.offset, query.offset + query.limit);
}

/** A compiled graph's drawable shape (`GET /assistants/{id}/graph`), from LangGraph's getGraph(). */
export async function graphJson(graph: { getGraphAsync(): Promise<{ toJSON(): unknown }> }) {
  return (await graph.getGraphAsync()).toJSON();
}

/**
 * The input and state schemas of a graph, as JSON Schema, read from its state channels: every
 * channel is a state key, and `messages` takes the SDK's message dicts.
 */
export function graphSchemas(graphId: GraphId, channels: string[]) {
  const property = (name: string) =>
    name === "messages"
      ? {
          type: "array",
          items: {
            type: "object",
            properties: { type: { type: "string" }, content: {}, id: { type: "string" } },
            required: ["content"],
          },
        }
      : {};
  const keys = channels.filter((c) => !c.startsWith("__") && !c.startsWith("branch:"));
  const schema = (title: string, props: string[]) => ({
    title,
    type: "object",
    properties: Object.fromEntries(props.map((k) => [k, property(k)])),
  });
  return {
    graph_id: graphId,
    input_schema: schema("input", GRAPHS[graphId].runnable ? ["messages"] : keys),
    output_schema: schema("output", keys),
    state_schema: schema("state", keys),
    config_schema: { title: "config", type: "object", properties: {} },
    context_schema: null,
  };
}
