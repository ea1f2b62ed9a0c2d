import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import { randomUUID } from "node:crypto";
import * as z from "../../shared/zod";
import { AppError, badRequest, notFound } from "../../shared/errors";
import { type AgentAssistants, type AssistantRecord, assistantItem } from "../../shared/stores/agent-assistants";
import { assistantNotFound, noAssistantFor } from "./errors";
import type { AssistantConfig, AssistantCreate, AssistantPatch, AssistantSearch, AssistantVersions } from "./requests";
import type { RunAssistant } from "./runs";
import { jsonContains } from "./json-contains";
import { backoff, CONFLICT_RETRY } from "../../shared/stores/batch";

/** The graphs this deployment serves: `chat` runs; `support` is shown but runs from Intercom only. */
export const GRAPHS = {
  chat: { description: "The chat agent: memory, knowledge base and tools, one thread per session.", runnable: true },
  support: {
    description: "The Intercom support agent. Read-only here: its runs start from Intercom's webhooks.",
    runnable: false,
  },
} as const;
export type GraphId = keyof typeof GRAPHS;

// A graph's assistant id is a name-based uuid5 of its graph id in LangGraph's own namespace for
// graphs (NAMESPACE_GRAPH in its server), as LangGraph Platform derives its default assistants'
// ids: stable across deployments, and the same id a client computes.
const NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";
export const assistantIdOf = (graphId: string): string => uuid5(graphId, NAMESPACE);

// The deployment's graphs do not change while it runs: their assistants' timestamps are fixed.
const DEPLOYED_AT = new Date(0).toISOString();

/** The graph whose default assistant an id names (its graph id or its assistant id), if any. */
export function systemGraphOf(assistantId: string): GraphId | undefined {
  for (const graphId of Object.keys(GRAPHS) as GraphId[])
    if (assistantId === graphId || assistantId === assistantIdOf(graphId)) return graphId;
  return undefined;
}

/** A deployed graph's own assistant: read-only, the same for every user. */
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
export type AssistantJson = ReturnType<typeof assistant> | ReturnType<typeof assistantJson>;

export function assistantJson(r: AssistantRecord) {
  return { ...assistantItem(r), graph_id: r.graphId as GraphId };
}

const readOnly = (graphId: string) =>
  new AppError(
    409,
    "assistant_read_only",
    `the ${graphId} graph's own assistant is the deployment's: create one of yours`,
  );

interface AssistantFilter {
  graph_id?: string | null;
  name?: string | null;
  metadata?: Record<string, unknown> | null;
}

const filtered = (all: AssistantJson[], query: AssistantFilter) =>
  all
    .filter((a) => !query.graph_id || a.graph_id === query.graph_id)
    // As LangGraph's server searches names: a part of the name, in any case.
    .filter((a) => !query.name || a.name.toLowerCase().includes(query.name.toLowerCase()))
    .filter((a) => jsonContains(a.metadata, query.metadata ?? {}));

/**
 * The Agent Server API's assistants: each deployed graph's own (read-only, shared), and each
 * user's own, stored with every version in DynamoDB (shared/stores/agent-assistants.ts): a graph
 * plus its configuration (a system prompt, a model, the session settings it allows, the tools that
 * wait for approval) and context. Another user's assistant is 404, as if it did not exist.
 */
export class AssistantService {
  constructor(
    private readonly records: AgentAssistants,
    /** the chat models an assistant may name (the deployment's) */
    private readonly models: readonly string[],
  ) {}

  /** The assistant an id names for this caller: a graph id, a graph's own assistant, or one of theirs. */
  async get(userId: string, assistantId: string): Promise<AssistantJson> {
    const graphId = systemGraphOf(assistantId);
    if (graphId) return assistant(graphId);
    const record = ASSISTANT_ID.safeParse(assistantId).success
      ? await this.records.get(userId, assistantId)
      : undefined;
    if (!record) throw assistantNotFound();
    return assistantJson(record);
  }

  /** What a run of this assistant runs: its graph, and what its configuration adds to the run's. */
  async forRun(userId: string, assistantId: string): Promise<RunAssistant> {
    const found = await this.get(userId, assistantId).catch((err) => {
      if (err instanceof AppError && err.status === 404) throw noAssistantFor(assistantId);
      throw err;
    });
    const configurable = (found.config as { configurable?: Record<string, unknown> }).configurable ?? {};
    return { assistant_id: found.assistant_id, graph_id: found.graph_id, configurable };
  }

  async create(userId: string, body: z.infer<typeof AssistantCreate>) {
    if (!Object.hasOwn(GRAPHS, body.graph_id))
      throw badRequest("invalid_graph_id", `graph_id: no graph "${body.graph_id}"`);
    this.checkConfig(body.config);
    const assistantId = body.assistant_id ?? randomUUID();
    if (systemGraphOf(assistantId)) throw readOnly(body.graph_id);
    const now = new Date().toISOString();
    const record: AssistantRecord = {
      assistantId,
      graphId: body.graph_id,
      name: body.name ?? "Untitled",
      description: body.description ?? null,
      config: body.config ?? {},
      context: body.context ?? {},
      metadata: body.metadata ?? {},
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    if (await this.records.write(userId, record, 0, { asNewVersion: true, maxVersion: 1 }))
      return assistantJson(record);
    const existing = await this.records.get(userId, assistantId);
    if (existing && body.if_exists === "do_nothing") return assistantJson(existing);
    throw new AppError(409, "assistant_exists", "Assistant already exists");
  }

  /** A new version from the current one and the patch; it becomes the current one. */
  async update(userId: string, assistantId: string, patch: z.infer<typeof AssistantPatch>) {
    this.checkConfig(patch.config);
    if (patch.graph_id != null && !Object.hasOwn(GRAPHS, patch.graph_id))
      throw badRequest("invalid_graph_id", `graph_id: no graph "${patch.graph_id}"`);
    for (let attempt = 0; attempt < CONFLICT_RETRY.maxAttempts; attempt++) {
      if (attempt > 0) await backoff(attempt, CONFLICT_RETRY);
      // The record and its highest version from one read: the write is conditioned on both.
      const { maxVersion, ...current } = await this.stored(userId, assistantId);
      const next: AssistantRecord = {
        ...current,
        graphId: patch.graph_id ?? current.graphId,
        name: patch.name ?? current.name,
        description: patch.description === undefined ? current.description : (patch.description ?? null),
        config: patch.config ?? current.config,
        context: patch.context ?? current.context,
        metadata: { ...current.metadata, ...(patch.metadata ?? {}) },
        version: maxVersion + 1,
        updatedAt: new Date().toISOString(),
      };
      if (await this.records.write(userId, next, maxVersion, { asNewVersion: true, maxVersion: next.version }))
        return assistantJson(next);
    }
    throw new AppError(409, "assistant_busy", "the assistant kept changing meanwhile; retry");
  }

  /** Makes an earlier version the current one; the next update still makes a new version. */
  async setLatest(userId: string, assistantId: string, version: number) {
    for (let attempt = 0; attempt < CONFLICT_RETRY.maxAttempts; attempt++) {
      if (attempt > 0) await backoff(attempt, CONFLICT_RETRY);
      const { maxVersion } = await this.stored(userId, assistantId);
      const chosen = (await this.records.versions(userId, assistantId)).find((v) => v.version === version);
      if (!chosen) throw notFound("assistant_version_not_found", "Assistant version not found");
      const current = { ...chosen, updatedAt: new Date().toISOString() };
      if (await this.records.write(userId, current, maxVersion, { asNewVersion: false, maxVersion }))
        return assistantJson(current);
    }
    throw new AppError(409, "assistant_busy", "the assistant kept changing meanwhile; retry");
  }

  async versions(userId: string, assistantId: string, query: z.infer<typeof AssistantVersions>) {
    await this.stored(userId, assistantId);
    return (await this.records.versions(userId, assistantId))
      .map(assistantJson)
      .filter((v) => jsonContains(v.metadata, query.metadata ?? {}))
      .slice(query.offset, query.offset + query.limit);
  }

  /**
   * Removes the caller's assistant, after `first` (its threads, for delete_threads): the assistant
   * goes last, so a `first` that fails part way (a thread a run holds) leaves it to retry with.
   */
  async delete(userId: string, assistantId: string, first?: () => Promise<void>) {
    await this.stored(userId, assistantId);
    await first?.();
    await this.records.remove(userId, assistantId);
  }

  /** A page of the graphs' assistants and the caller's, and how many match in all. */
  async search(userId: string, query: z.infer<typeof AssistantSearch>) {
    const found = filtered(await this.all(userId), query);
    const key = query.sort_by ?? "created_at";
    found.sort(
      (a: AssistantJson, b: AssistantJson) =>
        (String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0) *
        (query.sort_order === "asc" ? 1 : -1),
    );
    return { assistants: found.slice(query.offset, query.offset + query.limit), total: found.length };
  }

  async count(userId: string, query: AssistantFilter) {
    return filtered(await this.all(userId), query).length;
  }

  private async all(userId: string): Promise<AssistantJson[]> {
    return [
      ...(Object.keys(GRAPHS) as GraphId[]).map(assistant),
      ...(await this.records.list(userId)).map(assistantJson),
    ];
  }

  /** One of the caller's own assistants; a graph's own is read-only, anything else 404. */
  private async stored(userId: string, assistantId: string): Promise<AssistantRecord & { maxVersion: number }> {
    const graphId = systemGraphOf(assistantId);
    if (graphId) throw readOnly(graphId);
    const record = ASSISTANT_ID.safeParse(assistantId).success
      ? await this.records.get(userId, assistantId)
      : undefined;
    if (!record) throw assistantNotFound();
    return record;
  }

  /** A model an assistant names must be one the deployment runs. */
  private checkConfig(config: z.infer<typeof AssistantConfig> | null | undefined) {
    const model = config?.configurable?.model;
    if (model !== undefined && !this.models.includes(model))
      throw badRequest(
        "invalid_model",
        `config.configurable.model: this deployment runs ${this.models.length ? this.models.join(", ") : "no named model (the offline stand-in)"}`,
      );
  }
}

const ASSISTANT_ID = z.uuid();

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
