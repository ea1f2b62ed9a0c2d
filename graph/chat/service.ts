import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  type AIMessage,
  type AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  isAIMessage,
  type ToolMessage,
} from "@langchain/core/messages";
import { randomUUID } from "node:crypto";
import { AppError, sessionNotFound, storeUnavailable } from "../../shared/errors";
import type { QueuePublisher } from "../../shared/queue";
import type { ConversationStore, TraceStep } from "../../shared/stores/conversations";
import { LeaseLost, type SessionLeases } from "../../shared/stores/session-lease";
import type { SessionOwners } from "../../shared/stores/session-owners";
import type { ExtractionMessage } from "../memory/message";
import { agentFailure } from "./errors";
import type { ChatGraph } from "./graph";
import { firstWords, nameSession } from "./naming";
import { TraceCollector } from "./trace";

export interface ChatTurn {
  userId: string;
  projectId?: string;
  /** absent: start a new session */
  sessionId?: string;
  message: string;
  /** when another run holds the session: answer 409 at once (default), or wait for it */
  ifBusy?: "reject" | "queue";
  /**
   * Epoch ms by which the run must have ended (the function's deadline less what saving the turn
   * needs). Bounds the wait for a busy session, and aborts the model calls, the naming call and the
   * tools once passed, so nothing keeps running after the response is lost.
   */
  deadline?: number;
}

export interface ChatReply {
  reply: string;
  sessionId: string;
  messageId: string;
  sessionName?: string;
  /** what the run did: nodes, model calls, tool calls */
  trace: TraceStep[];
}

/** What a streaming client is told as the turn runs. Every callback is optional. */
export interface TurnObserver {
  onSession?(sessionId: string): void;
  onToken?(text: string): void;
  onToolStart?(name: string, args: unknown): void;
  onToolEnd?(name: string, summary: string): void;
  onTrace?(step: TraceStep): void;
  onSessionName?(name: string): void;
}

export interface ChatServiceDeps {
  graph: ChatGraph;
  owners: SessionOwners;
  leases: SessionLeases;
  /** how long an `if_busy: "queue"` request waits for the session */
  queueWaitMs?: number;
  /** names new sessions; absent: their first five words */
  namingModel?: BaseChatModel;
  /** the answers-only history for UIs; absent in a deployment without Supabase */
  conversations?: ConversationStore;
  recursionLimit: number;
  /** receives every finished turn for memory extraction */
  extractionQueue?: QueuePublisher;
  /** a failed hand-off is reported here and never fails the reply */
  onExtractionPublishFailure?: (err: unknown) => void;
}

/** Least time a run is left after waiting for a busy session: waiting longer would only time out. */
export const MIN_RUN_MS = 10_000;

const turnTimeout = (cause: unknown) =>
  new AppError(504, "turn_timeout", "the answer did not finish within the time this request has", { cause });
const leaseLost = (cause: unknown) =>
  new AppError(409, "session_busy", "another run took this session over before the answer finished", { cause });

const sessionBusy = () =>
  new AppError(
    409,
    "session_busy",
    'another message in this session is still being answered; retry, or send if_busy: "queue"',
  );

/**
 * One chat turn, for /api/chat and /api/chat/stream alike: check the session, take its
 * lease, run the graph, save the answers-only history with the session's name and the
 * turn's trace, and hand the turn to memory extraction.
 */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  async reply(turn: ChatTurn, observer: TurnObserver = {}): Promise<ChatReply> {
    const isNew = turn.sessionId === undefined;
    const sessionId = turn.sessionId ?? randomUUID();
    await this.enterSession(sessionId, turn);
    const lease =
      turn.ifBusy === "queue"
        ? await this.deps.leases.acquire(sessionId, this.queueWait(turn.deadline))
        : await this.deps.leases.tryAcquire(sessionId);
    if (!lease) throw sessionBusy();
    const signal = runSignal(lease.signal, turn.deadline);
    try {
      observer.onSession?.(sessionId);
      // Named alongside the run, so the name costs the reply no time.
      const naming = isNew ? this.name(turn.message, signal) : undefined;
      const tracer = new TraceCollector(observer.onTrace && ((step) => observer.onTrace!(step)));
      const human = new HumanMessage({ id: randomUUID(), content: turn.message });
      const askedAt = new Date().toISOString();
      const answer = await this.run(sessionId, turn, human, tracer, observer, signal);
      const reply = textOf(answer);
      const messageId = answer.id!;
      const sessionName = naming ? await naming : undefined;
      if (sessionName) observer.onSessionName?.(sessionName);

      const saved = await this.deps.conversations
        ?.recordTurn({
          sessionId,
          userId: turn.userId,
          projectId: turn.projectId ?? null,
          sessionName: sessionName ?? firstWords(turn.message),
          turnId: messageId,
          messages: [
            { role: "user", content: turn.message, created_at: askedAt, message_id: human.id! },
            { role: "assistant", content: reply, created_at: new Date().toISOString(), message_id: messageId },
          ],
          trace: tracer.steps,
        })
        .catch((err) => {
          throw storeUnavailable(err);
        });
      if (saved === "forbidden") throw sessionNotFound();
      await this.handOffForExtraction({
        user_id: turn.userId,
        project_id: turn.projectId ?? null,
        session_id: sessionId,
        turn_id: messageId,
        user_message: turn.message,
        assistant_reply: reply,
      });
      return { reply, sessionId, messageId, trace: tracer.steps, ...(sessionName ? { sessionName } : {}) };
    } finally {
      await lease.release();
    }
  }

  /**
   * Runs the graph on the new message only (history comes from the checkpoint), reporting
   * tokens and tool calls as they happen. Tokens are asked for only when someone listens.
   */
  private async run(
    sessionId: string,
    turn: ChatTurn,
    human: HumanMessage,
    tracer: TraceCollector,
    observer: TurnObserver,
    signal: AbortSignal,
  ) {
    let answer: AIMessage | undefined;
    try {
      const stream = await this.deps.graph.stream(
        { messages: [human] },
        {
          configurable: {
            thread_id: sessionId,
            session_id: sessionId,
            user_id: turn.userId,
            project_id: turn.projectId,
          },
          recursionLimit: this.deps.recursionLimit,
          callbacks: [tracer],
          signal,
          streamMode: observer.onToken ? ["updates", "messages"] : ["updates"],
        },
      );
      for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
        if (mode === "messages") {
          const [message, metadata] = chunk as [AIMessageChunk, { langgraph_node?: string }];
          const text = typeof message.content === "string" ? message.content : "";
          if (metadata.langgraph_node === "agent" && text) observer.onToken?.(text);
          continue;
        }
        const update = chunk as { agent?: { messages: BaseMessage[] }; tools?: { messages: ToolMessage[] } };
        for (const message of update.agent?.messages ?? []) {
          if (!isAIMessage(message)) continue;
          answer = message;
          for (const call of message.tool_calls ?? []) observer.onToolStart?.(call.name, call.args);
        }
        for (const result of update.tools?.messages ?? [])
          observer.onToolEnd?.(result.name ?? "tool", summarize(String(result.content)));
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason instanceof LeaseLost ? leaseLost(err) : turnTimeout(err);
      throw agentFailure(err, this.deps.recursionLimit);
    }
    if (!answer) throw agentFailure(new Error("the run ended without an answer"), this.deps.recursionLimit);
    return answer;
  }

  private name(message: string, signal: AbortSignal): Promise<string> {
    return this.deps.namingModel
      ? nameSession(this.deps.namingModel, message, { signal })
      : Promise.resolve(firstWords(message));
  }

  /** An `if_busy: "queue"` request waits no longer than its deadline leaves room for a run. */
  private queueWait(deadline: number | undefined): number {
    const configured = this.deps.queueWaitMs ?? 20_000;
    return deadline === undefined ? configured : Math.max(0, Math.min(configured, deadline - Date.now() - MIN_RUN_MS));
  }

  /** The reply never waits for extraction: only for the queue to accept the turn, and never fails on it. */
  private async handOffForExtraction(message: ExtractionMessage) {
    if (!this.deps.extractionQueue) return;
    try {
      await this.deps.extractionQueue.publish(message);
    } catch (err) {
      this.deps.onExtractionPublishFailure?.(err);
    }
  }

  /** A new session is claimed for the caller; an existing one must be theirs. */
  private async enterSession(sessionId: string, turn: ChatTurn) {
    try {
      if (turn.sessionId === undefined) {
        if (!(await this.deps.owners.claim(sessionId, turn.userId)))
          throw new Error(`session id ${sessionId} already taken`);
        return;
      }
      if ((await this.deps.owners.owner(sessionId)) === turn.userId) return;
    } catch (err) {
      throw agentFailure(err, this.deps.recursionLimit);
    }
    throw sessionNotFound();
  }
}

/** Aborted when the lease is lost or the deadline passes, whichever comes first. */
function runSignal(leaseSignal: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return leaseSignal;
  return AbortSignal.any([leaseSignal, AbortSignal.timeout(Math.max(0, deadline - Date.now()))]);
}

/** A short summary of a tool result for stream events: its first 200 characters. */
function summarize(content: string): string {
  return content.length > 200 ? `${content.slice(0, 200)}…` : content;
}

/** The text of a message: string content, or the text blocks of structured content. */
export function textOf(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) =>
      typeof block === "string" ? block : block.type === "text" ? String((block as { text: string }).text) : "",
    )
    .join("");
}
