import { type FormEvent, useState } from "react";
import { api, describeError } from "./api";
import { ErrorNote } from "./ErrorNote";
import { SupportRun } from "./SupportRun";
import { usePolling } from "./usePolling";

interface Action {
  conversation_id: string;
  kind: "reply" | "note" | "snooze";
  body: string;
  at: string;
}

interface Written {
  id: string;
  email: string;
  body: string;
  at: string;
}

const STORAGE_KEY = "playground.intercom";

/**
 * The support agent, end to end, on the local Intercom stand-in (infra/local/intercom.ts): write in
 * as a customer (the stand-in creates the conversation and the webhook is notified, signed), then
 * watch what the agent does in Intercom arrive: its validation note, its reply, the snooze, and the
 * support run's hops that led there.
 */
export function Intercom() {
  const [email, setEmail] = useState("ann@example.com");
  const [body, setBody] = useState("How much does the Pro plan cost?");
  const [problem, setProblem] = useState<{ code: string; message: string }>();
  const [written, setWritten] = useState<Written[]>(() => JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "[]"));
  const actions = usePolling(() => api<Action[]>("playground", "/_local/intercom/actions"), 1500, "actions");

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      const created = await api<{ conversation_id: string }>("playground", "/_local/intercom/customer", {
        method: "POST",
        body: JSON.stringify({ email, body }),
      });
      const next = [{ id: created.conversation_id, email, body, at: new Date().toISOString() }, ...written].slice(
        0,
        20,
      );
      setWritten(next);
      localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
      setProblem(undefined);
      await actions.refresh();
    } catch (err) {
      setProblem(describeError(err));
    }
  };

  return (
    <section aria-labelledby="intercom-heading">
      <h2 id="intercom-heading">Intercom (local stand-in)</h2>
      <form className="stacked-form" onSubmit={(e) => void onSubmit(e)}>
        <label htmlFor="intercom-email">Customer email</label>
        <input id="intercom-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <label htmlFor="intercom-body">Customer message</label>
        <textarea id="intercom-body" rows={2} value={body} onChange={(e) => setBody(e.target.value)} required />
        <button type="submit" disabled={!email.trim() || !body.trim()}>
          Write in as the customer
        </button>
      </form>
      {problem && <ErrorNote error={problem} />}
      {actions.error && <ErrorNote error={actions.error} />}
      {written.length === 0 && <p className="hint">No conversation yet: write in above.</p>}
      {written.map((c) => (
        <Conversation
          key={c.id}
          conversation={c}
          actions={(actions.data ?? []).filter((a) => a.conversation_id === c.id)}
        />
      ))}
    </section>
  );
}

function Conversation({ conversation, actions }: { conversation: Written; actions: Action[] }) {
  // The agent snoozes what it answered, and leaves what it handed to the team open for them.
  const status = actions.some((a) => a.kind === "snooze")
    ? "handled, snoozed"
    : actions.some((a) => a.kind === "note" && a.body.startsWith("Escalated to the team"))
      ? "handed to the team"
      : "waiting for the agent…";
  return (
    <article className="conversation" data-testid="conversation" aria-label={`Conversation ${conversation.id}`}>
      <h3>
        Conversation {conversation.id} <span className="badge">{status}</span>
      </h3>
      <ol className="timeline">
        <li className="part customer">
          <span className="who">{conversation.email}</span>
          <p>{conversation.body}</p>
        </li>
        {actions.map((a, i) => (
          <li key={`${a.at}-${i}`} className={`part ${a.kind}`} data-testid={`intercom-${a.kind}`}>
            <span className="who">{label[a.kind]}</span>
            <p>{a.kind === "snooze" ? a.body : stripHtml(a.body)}</p>
            <time dateTime={a.at}>{new Date(a.at).toLocaleTimeString()}</time>
          </li>
        ))}
      </ol>
      <SupportRun conversationId={conversation.id} />
    </article>
  );
}

const label = { reply: "Agent reply", note: "Internal note", snooze: "Snoozed" } as const;

/** Bodies are Intercom's HTML; shown as text, never as markup. */
function stripHtml(html: string): string {
  // Line breaks kept as newlines (the panel shows them with white-space: pre-wrap).
  return new DOMParser().parseFromString(html.replace(/<br\s*\/?>/gi, "\n"), "text/html").body.textContent ?? "";
}
