import { type AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { randomUUID } from "node:crypto";
import { sessionNotFound, storeUnavailable } from "../../shared/errors";
import type { QueuePublisher } from "../../shared/queue";
import type { ConversationStore } from "../../shared/stores/conversations";
import type { SessionOwners } from "../../shared/stores/session-owners";
import type { ExtractionMessage } from "../memory/message";
import { agentFailure } from "./errors";
import type { ChatGraph } from "./graph";

export interface ChatTurn {
  userId: string;
  projectId?: string;
  /** absent: start a new session */
  sessionId?: string;
  message: string;
}

export interface ChatReply {
  reply: string;
  sessionId: string;
  messageId: string;
}

export interface ChatServiceDeps {
  graph: ChatGraph;
  owners: SessionOwners;
  /** the answers-only history for UIs; absent in a deployment without Supabase */
  conversations?: ConversationStore;
  recursionLimit: number;
  /** receives every finished turn for memory extraction */
  extractionQueue?: QueuePublisher;
  /** a failed hand-off is reported here and never fails the reply */
  onExtractionPublishFailure?: (err: unknown) => void;
}

/** One chat turn: check the session, run the graph, save the answers-only history. */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  async reply(turn: ChatTurn): Promise<ChatReply> {
    const sessionId = turn.sessionId ?? randomUUID();
    await this.enterSession(sessionId, turn);

    const human = new HumanMessage({ id: randomUUID(), content: turn.message });
    const askedAt = new Date().toISOString();
    let messages: BaseMessage[];
    try {
      const state = await this.deps.graph.invoke(
        { messages: [human] },
        {
          configurable: {
            thread_id: sessionId,
            session_id: sessionId,
            user_id: turn.userId,
            project_id: turn.projectId,
          },
          recursionLimit: this.deps.recursionLimit,
        },
      );
      messages = state.messages;
    } catch (err) {
      throw agentFailure(err, this.deps.recursionLimit);
    }
    const answer = messages[messages.length - 1] as AIMessage;
    const reply = textOf(answer);
    const messageId = answer.id!;

    const saved = await this.deps.conversations
      ?.appendTurn(sessionId, turn.userId, messageId, [
        { role: "user", content: turn.message, created_at: askedAt, message_id: human.id! },
        { role: "assistant", content: reply, created_at: new Date().toISOString(), message_id: messageId },
      ])
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
    return { reply, sessionId, messageId };
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

/** The text of a message: string content, or the text blocks of structured content. */
export function textOf(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) =>
      typeof block === "string" ? block : block.type === "text" ? String((block as { text: string }).text) : "",
    )
    .join("");
}
