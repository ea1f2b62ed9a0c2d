import type { Client } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useState } from "react";
import { api, describeError, type SessionSettings, type SessionSummary } from "./api";
import { ErrorNote } from "./ErrorNote";

interface Props {
  user: string;
  client: Client;
  current: string | null;
  /** bumped by the page after each turn, so a new session and its name show up */
  version: number;
  onSelect: (threadId: string | null) => void;
}

const PAGE = 20;

/**
 * The user's sessions, newest activity first, from `GET /api/sessions` (paginated by its cursor).
 * A session's name is the generated one unless it was renamed here: a rename is the thread's
 * `metadata.name` (PATCH /threads/{id}, the Agent Server API), which this list prefers.
 */
export function Sessions({ user, client, current, version, onSelect }: Props) {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [names, setNames] = useState<Record<string, string>>({});
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<{ code: string; message: string }>();
  const [editing, setEditing] = useState<string>();
  const [configuring, setConfiguring] = useState<string>();

  const load = useCallback(
    async (after?: string) => {
      try {
        const query = new URLSearchParams({ limit: String(PAGE), ...(after ? { cursor: after } : {}) });
        const page = await api<{ sessions: SessionSummary[]; next_cursor?: string }>(user, `/api/sessions?${query}`);
        const threads = await client.threads.search({ ids: page.sessions.map((s) => s.session_id), limit: PAGE });
        const renamed: Record<string, string> = {};
        for (const t of threads) if (typeof t.metadata?.name === "string") renamed[t.thread_id] = t.metadata.name;
        setSessions((prev) => (after ? [...prev, ...page.sessions] : page.sessions));
        setNames((prev) => ({ ...(after ? prev : {}), ...renamed }));
        setCursor(page.next_cursor);
        setError(undefined);
      } catch (err) {
        setError(describeError(err));
      }
    },
    [user, client],
  );

  // `version` is the page's signal that a turn changed the list.
  useEffect(() => {
    void load();
  }, [load, version]);

  const rename = async (id: string, name: string) => {
    setEditing(undefined);
    if (!name.trim()) return;
    try {
      await client.threads.update(id, { metadata: { name: name.trim() } });
      setNames((prev) => ({ ...prev, [id]: name.trim() }));
    } catch (err) {
      setError(describeError(err));
    }
  };

  /** PATCH /api/sessions/{id}: the next turn runs with the new settings. */
  const configure = async (id: string, change: Partial<SessionSettings>) => {
    const apply = (settings: SessionSettings) =>
      setSessions((prev) => prev.map((s) => (s.session_id === id ? { ...s, settings, private: settings.private } : s)));
    // Shown at once; the answer (or a reload, on failure) settles it.
    const before = sessions.find((s) => s.session_id === id)?.settings;
    if (before) apply({ ...before, ...change });
    try {
      const { settings } = await api<{ settings: SessionSettings }>(user, `/api/sessions/${id}`, {
        method: "PATCH",
        body: JSON.stringify({ settings: change }),
      });
      apply(settings);
      setError(undefined);
    } catch (err) {
      setError(describeError(err));
      await load();
    }
  };

  const remove = async (session: SessionSummary) => {
    if (!window.confirm(`Delete “${names[session.session_id] ?? session.name}” and everything in it?`)) return;
    try {
      await client.threads.delete(session.session_id);
      if (session.session_id === current) onSelect(null);
      await load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <nav className="sessions" aria-labelledby="sessions-heading">
      <div className="sessions-head">
        <h2 id="sessions-heading">Sessions</h2>
        <button type="button" onClick={() => onSelect(null)}>
          New chat
        </button>
      </div>
      {error && <ErrorNote error={error} />}
      {sessions.length === 0 && !error && <p className="hint">No sessions yet for {user}.</p>}
      <ul aria-label={`Sessions of ${user}`}>
        {sessions.map((s) => {
          const name = names[s.session_id] ?? s.name;
          return (
            <li key={s.session_id} className={s.session_id === current ? "current" : ""} data-testid="session">
              {editing === s.session_id ? (
                <RenameForm name={name} onDone={(value) => void rename(s.session_id, value)} />
              ) : (
                <button
                  type="button"
                  className="session-name"
                  aria-current={s.session_id === current ? "page" : undefined}
                  onClick={() => onSelect(s.session_id)}
                >
                  {name}
                  {s.private && <span className="badge">private</span>}
                  <span className="meta">
                    {s.message_count} messages · {new Date(s.updated_at).toLocaleString()}
                  </span>
                </button>
              )}
              {configuring === s.session_id && (
                <SettingsForm settings={s.settings} name={name} onChange={(c) => void configure(s.session_id, c)} />
              )}
              <div className="row-actions">
                <button
                  type="button"
                  className="small"
                  aria-expanded={configuring === s.session_id}
                  aria-label={`Settings of ${name}`}
                  onClick={() => setConfiguring(configuring === s.session_id ? undefined : s.session_id)}
                >
                  Settings
                </button>
                <button
                  type="button"
                  className="small"
                  aria-label={`Rename ${name}`}
                  onClick={() => setEditing(s.session_id)}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Delete ${name}`}
                  onClick={() => void remove(s)}
                >
                  Delete
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      {cursor && (
        <button type="button" className="secondary" onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </nav>
  );
}

const SETTING_LABELS: [keyof SessionSettings, string][] = [
  ["memory", "Memory tools"],
  ["knowledge", "Knowledge search"],
  ["user_context", "User context"],
  ["files", "Data files"],
  ["private", "Private (nothing remembered)"],
];

/** A session's settings as checkboxes; each change is saved at once and applies from the next turn. */
function SettingsForm({
  settings,
  name,
  onChange,
}: {
  settings: SessionSettings;
  name: string;
  onChange: (change: Partial<SessionSettings>) => void;
}) {
  return (
    <fieldset className="session-settings">
      <legend>Settings of {name}</legend>
      {SETTING_LABELS.map(([key, label]) => (
        <label key={key}>
          <input type="checkbox" checked={settings[key]} onChange={(e) => onChange({ [key]: e.target.checked })} />
          {label}
        </label>
      ))}
    </fieldset>
  );
}

function RenameForm({ name, onDone }: { name: string; onDone: (value: string) => void }) {
  const [value, setValue] = useState(name);
  return (
    <form
      className="rename"
      onSubmit={(e) => {
        e.preventDefault();
        onDone(value);
      }}
    >
      <label className="visually-hidden" htmlFor="rename-input">
        New name
      </label>
      <input
        id="rename-input"
        // biome-ignore lint/a11y/noAutofocus: the field the Rename button just opened
        autoFocus
        value={value}
        maxLength={120}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && onDone("")}
      />
      <button type="submit" className="small">
        Save
      </button>
    </form>
  );
}
