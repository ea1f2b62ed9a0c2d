import type { Client, Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import { describeError } from "../api";
import { ErrorNote } from "../ErrorNote";
import { replyPositions, textOf, toolCallsOf } from "./messages";
import { Approval, type Decision, isApprovalRequest } from "./Approval";
import { Attachments } from "./Attachments";
import { BranchSwitcher } from "./BranchSwitcher";
import { EditMessage } from "./EditMessage";
import { ToolCall } from "./ToolCall";

/** Which reply's trace to show: the session, and how many turns came after the reply. */
export interface TraceTarget {
  threadId: string;
  turnsAfter: number;
  content: string;
}

interface Props {
  user: string;
  client: Client;
  threadId: string | null;
  onThreadId: (threadId: string) => void;
  /** a run ended: the sidebar's names and times changed */
  onTurnDone: () => void;
  onShowTrace: (target: TraceTarget) => void;
}

type MultitaskStrategy = "reject" | "enqueue";

/**
 * The chat, through the LangGraph SDK's useStream against the Agent Server API: the thread is the
 * session, so what is typed here is what /api/sessions lists. Tokens stream in as the model writes
 * them (`messages-tuple`); tool calls sit inside the answer that made them.
 */
const BUSY = new Set(["thread_busy", "session_busy"]);

export function Chat({ user, client, threadId, onThreadId, onTurnDone, onShowTrace }: Props) {
  const [draft, setDraft] = useState("");
  // What was last sent, so a busy thread's refusal can offer to send it again, queued behind the running turn.
  const [lastSent, setLastSent] = useState<string>();
  const stream = useStream<{ messages: Message[] }>({
    client,
    assistantId: "chat",
    threadId,
    onThreadId,
    messagesKey: "messages",
    // The checkpoints the messages were first seen in: what Edit and Regenerate branch from, and
    // the versions the branch switcher offers (the SDK reads 10 by default, two or three turns).
    fetchStateHistory: { limit: 100 },
    // Every run is resumable (its events kept on the server) and its id kept in this tab's
    // sessionStorage: a reload mid-reply rejoins the run and the reply goes on where it was.
    reconnectOnMount: true,
    onFinish: () => onTurnDone(),
  });
  const log = useRef<HTMLOListElement>(null);
  // The thread files are attached to: read through refs, since an upload's loop outlives the
  // render that started it, and must not create a second thread for its second file.
  const currentThread = useRef(threadId);
  currentThread.current = threadId;
  const creating = useRef<Promise<string>>(undefined);
  useEffect(() => {
    if (!threadId) creating.current = undefined; // "New chat": the next file starts a new thread
  }, [threadId]);

  // Keep the newest words in view as they stream in.
  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView?.({ block: "end" });
  }, [stream.messages]);

  // The human message being edited, by id.
  const [editing, setEditing] = useState<string>();

  const send = (text: string, multitaskStrategy: MultitaskStrategy) => {
    if (!text.trim()) return;
    setLastSent(text);
    stream.submit(
      { messages: [{ type: "human", content: text }] },
      {
        multitaskStrategy,
        optimisticValues: (prev) => ({
          ...prev,
          messages: [...(prev.messages ?? []), { type: "human", content: text, id: `pending-${Date.now()}` }],
        }),
      },
    );
  };

  /**
   * Edit and Regenerate, as Agent Chat UI does them: a run from the checkpoint before the message
   * was first seen, which LangGraph keeps as a branch beside the old one (both stay switchable).
   */
  const parentCheckpoint = (message: Message, index: number) =>
    stream.getMessagesMetadata(message, index)?.firstSeenState?.parent_checkpoint ?? undefined;
  const editFrom = (message: Message, index: number, text: string) => {
    setEditing(undefined);
    setLastSent(text);
    stream.submit({ messages: [{ type: "human", content: text }] }, { checkpoint: parentCheckpoint(message, index) });
  };
  const regenerate = (message: Message, index: number) =>
    stream.submit(undefined, { checkpoint: parentCheckpoint(message, index) });
  // A run that stopped for approval resumes with one decision per call it asked about.
  const decide = (decisions: Decision[]) => stream.submit(undefined, { command: { resume: { decisions } } });

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    send(draft, "reject");
    setDraft("");
  };
  // Enter sends, Shift+Enter is a new line: the usual chat keys.
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) onSubmit(event);
  };

  const error = stream.error ? describeError(stream.error) : undefined;
  const positions = replyPositions(stream.messages, stream.isLoading);
  const visible = stream.messages.filter((m) => m.type === "human" || m.type === "ai");
  const pending = stream.isLoading ? undefined : stream.interrupt;
  const approval = pending && isApprovalRequest(pending.value) ? pending.value : undefined;

  return (
    <section className="chat" aria-labelledby="chat-heading">
      <h2 id="chat-heading" className="visually-hidden">
        Chat
      </h2>
      {visible.length === 0 && !stream.isLoading && (
        <p className="hint">
          Ask something. Try “How much does the Pro plan cost?”, “Remember that my team is called Falcon” or “I prefer
          aisle seats”.
        </p>
      )}
      <ol className="messages" ref={log} aria-label="Conversation" aria-live="polite" aria-busy={stream.isLoading}>
        {stream.messages.map((message, index) => {
          if (message.type !== "human" && message.type !== "ai") return null;
          const text = textOf(message);
          const calls = toolCallsOf(message, stream.messages);
          const turnsAfter = positions.get(index);
          const meta = stream.getMessagesMetadata(message, index);
          const canBranch = !stream.isLoading && meta?.firstSeenState?.parent_checkpoint != null;
          if (message.type === "human" && editing !== undefined && editing === message.id)
            return (
              <li key={message.id} className="message human editing">
                <EditMessage
                  text={text}
                  onSave={(edited) => editFrom(message, index, edited)}
                  onCancel={() => setEditing(undefined)}
                />
              </li>
            );
          return (
            <li key={message.id ?? index} className={`message ${message.type}`} data-testid={`message-${message.type}`}>
              <span className="visually-hidden">{message.type === "human" ? "You:" : "Agent:"}</span>
              {calls.length > 0 && (
                <div className="tool-calls">
                  {calls.map((call) => (
                    <ToolCall key={call.id} call={call} waiting={approval !== undefined} />
                  ))}
                </div>
              )}
              {text && <div className="text">{text}</div>}
              <div className="message-actions">
                <BranchSwitcher
                  branch={meta?.branch}
                  options={meta?.branchOptions}
                  onSelect={(branch) => stream.setBranch(branch)}
                  disabled={stream.isLoading}
                />
                {message.type === "human" && canBranch && message.id && (
                  <button type="button" className="link" onClick={() => setEditing(message.id)}>
                    Edit
                  </button>
                )}
                {turnsAfter !== undefined && canBranch && (
                  <button type="button" className="link" onClick={() => regenerate(message, index)}>
                    Regenerate
                  </button>
                )}
                {turnsAfter !== undefined && threadId && (
                  <button
                    type="button"
                    className="link"
                    onClick={() => onShowTrace({ threadId, turnsAfter, content: text })}
                  >
                    Trace of this reply
                  </button>
                )}
              </div>
            </li>
          );
        })}
        {stream.isLoading && !visible.some((m, i) => m.type === "ai" && i === visible.length - 1) && (
          <li className="message ai thinking" aria-label="The agent is working">
            …
          </li>
        )}
      </ol>
      {approval && (
        <Approval key={pending?.id ?? "approval"} request={approval} onDecide={decide} disabled={stream.isLoading} />
      )}
      {error && (
        <ErrorNote error={error}>
          {/* Another run holds the thread (LangGraph's 422 thread_busy; the chat API's 409 session_busy). */}
          {BUSY.has(error.code) && lastSent && (
            <button type="button" onClick={() => send(lastSent, "enqueue")}>
              Queue it
            </button>
          )}
        </ErrorNote>
      )}
      <Attachments
        user={user}
        threadId={threadId}
        ensureThread={() => {
          if (currentThread.current) return Promise.resolve(currentThread.current);
          // A file needs its session first: create the thread the next message will run on, once
          // for all the files chosen together (the prop changes only after this render).
          creating.current ??= client.threads.create().then((thread) => {
            onThreadId(thread.thread_id);
            return thread.thread_id;
          });
          return creating.current;
        }}
      />
      <form className="composer" onSubmit={onSubmit}>
        <label htmlFor="message">Message</label>
        <textarea
          id="message"
          rows={2}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          placeholder="Type a message; Enter sends, Shift+Enter adds a line"
        />
        <div className="composer-actions">
          <button type="submit" disabled={!draft.trim()}>
            Send
          </button>
          {stream.isLoading && (
            <button type="button" className="secondary" onClick={() => void stream.stop()}>
              Stop
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
