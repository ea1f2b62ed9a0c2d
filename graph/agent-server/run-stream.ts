import { type BaseMessage, type BaseMessageChunk, isBaseMessageChunk } from "@langchain/core/messages";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import type { GraphStreamMode } from "../chat/graph-run";
import { STREAM_MODES, type StreamMode } from "./requests";
import { checkpointOf, jsonSafe, messageDict, valuesDict } from "./serialize";

/** Where a run's events go: the SSE response, or nowhere for /runs/wait. */
export type EventSink = (name: string, data: unknown) => void;

interface DebugCheckpoint {
  config?: { configurable?: Record<string, unknown> };
  parentConfig?: { configurable?: Record<string, unknown> };
  values: unknown;
  metadata: unknown;
  next: string[];
  tasks: unknown[];
}

/** LangGraph's checkpoint chunk ("checkpoints", and "debug"'s checkpoint payload) as the API sends it. */
function checkpointPayload(payload: DebugCheckpoint) {
  const { config, parentConfig, ...rest } = payload;
  return {
    ...(jsonSafe(rest) as object),
    values: valuesDict(payload.values),
    checkpoint: checkpointOf(config as never),
    parent_checkpoint: checkpointOf(parentConfig as never),
  };
}

/**
 * The SSE events of one run, in the stream modes its client asked for, from the LangGraph chunks
 * (and callback events) the graph streams: the Agent Server API's event names and shapes.
 */
export class RunStream {
  readonly modes: Set<StreamMode>;
  /** what the graph must stream for these modes */
  readonly graphModes: GraphStreamMode[];
  readonly wantsEvents: boolean;
  private readonly partial = new Map<string, BaseMessageChunk>();
  private readonly completed = new Set<string>();

  constructor(
    modes: StreamMode[],
    private readonly send: EventSink,
  ) {
    this.modes = new Set(modes);
    this.graphModes = [...new Set(modes.flatMap((m) => STREAM_MODES[m] as readonly GraphStreamMode[]))];
    this.wantsEvents = this.modes.has("events");
  }

  chunk(mode: string, chunk: unknown): void {
    switch (mode) {
      case "values":
        if (this.modes.has("values")) this.send("values", valuesDict(chunk));
        if (this.modes.has("messages")) this.complete((chunk as { messages?: BaseMessage[] }).messages ?? []);
        return;
      case "updates":
        if (this.modes.has("updates")) this.send("updates", valuesDict(chunk));
        return;
      case "custom":
        if (this.modes.has("custom")) this.send("custom", jsonSafe(chunk));
        return;
      case "messages": {
        const [message, metadata] = chunk as [BaseMessage, Record<string, unknown>];
        if (this.modes.has("messages-tuple")) this.send("messages", [messageDict(message), jsonSafe(metadata)]);
        if (this.modes.has("messages")) this.partialMessage(message, metadata);
        return;
      }
      case "tasks":
        if (this.modes.has("tasks")) this.send("tasks", jsonSafe(chunk));
        return;
      case "checkpoints":
        if (this.modes.has("checkpoints")) this.send("checkpoints", checkpointPayload(chunk as DebugCheckpoint));
        return;
      case "debug": {
        if (!this.modes.has("debug")) return;
        const debug = chunk as { type: string; payload: unknown };
        this.send(
          "debug",
          debug.type === "checkpoint"
            ? { ...(jsonSafe(debug) as object), payload: checkpointPayload(debug.payload as DebugCheckpoint) }
            : jsonSafe(debug),
        );
        return;
      }
    }
  }

  event(event: StreamEvent): void {
    if (this.wantsEvents) this.send("events", jsonSafe(event));
  }

  /** A streamed token: the message so far, and its metadata the first time it is seen. */
  private partialMessage(message: BaseMessage, metadata: Record<string, unknown>) {
    if (!isBaseMessageChunk(message) || !message.id) return;
    const previous = this.partial.get(message.id);
    if (!previous) this.send("messages/metadata", { [message.id]: { metadata: jsonSafe(metadata) } });
    const merged = previous ? previous.concat(message) : message;
    this.partial.set(message.id, merged);
    this.send("messages/partial", [messageDict(merged)]);
  }

  /** Messages the state now holds whole, each once. */
  private complete(messages: BaseMessage[]) {
    const fresh = messages.filter((m) => m.id && !this.completed.has(m.id));
    for (const m of fresh) this.completed.add(m.id!);
    if (fresh.length > 0) this.send("messages/complete", fresh.map(messageDict));
  }
}
