import type { Client, Thread } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { api, describeError, path, type SessionSettings } from "./api";
import { threadTitle, visibleMessageCount } from "./chat/messages";
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

/** One session's settings as GET and PATCH /api/sessions/{id} answer them (functions/sessions.ts). */
interface SessionConfig {
  private: boolean;
  settings: SessionSettings;
  approve_tools: string[] | "*";
}

type ConfigChange = { settings?: Partial<SessionSettings>; approve_tools?: string[] | "*" };

/**
 * The user's sessions as LangGraph's clients list them (Agent Chat UI's thread history):
 * `threads.search`, most recently updated first, a page at a time. A session is a thread, named by
 * its `metadata.name` once renamed here (PATCH /threads/{id}), else by its first message. Its
 * settings are the session API's (`/api/sessions/{id}`), read when they are opened.
 */
export function Sessions({ user, client, current, version, onSelect }: Props) {
  const [threads, setThreads] = useState<Thread[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<{ code: string; message: string }>();
  const [editing, setEditing] = useState<string>();
  const [configuring, setConfiguring] = useState<{ id: string; config?: SessionConfig }>();

  const load = useCallback(
    async (offset = 0) => {
      try {
        const page = await client.threads.search({ limit: PAGE, offset, sortBy: "updated_at", sortOrder: "desc" });
        setThreads((prev) => (offset > 0 ? [...prev, ...page] : page));
        setMore(page.length === PAGE);
        setError(undefined);
      } catch (err) {
        setError(describeError(err));
      }
    },
    [client],
  );

  // `version` is the page's signal that a turn changed the list.
  useEffect(() => {
    void load();
  }, [load, version]);

  const rename = async (id: string, name: string) => {
    setEditing(undefined);
    if (!name.trim()) return;
    try {
      const renamed = await client.threads.update(id, { metadata: { name: name.trim() } });
      setThreads((prev) => prev.map((t) => (t.thread_id === id ? { ...t, metadata: renamed.metadata } : t)));
    } catch (err) {
      setError(describeError(err));
    }
  };

  /** The settings PATCHes, one after another, and how many were asked for (configure). */
  const configQueue = useRef(Promise.resolve());
  const configSeq = useRef(0);

  /** The settings of the session whose form is open; another answer (a form closed since) is dropped. */
  const showConfig = (id: string, config: SessionConfig | undefined) =>
    setConfiguring((open) => (open?.id === id ? { id, config } : open));

  const toggleSettings = async (id: string) => {
    if (configuring?.id === id) return setConfiguring(undefined);
    setConfiguring({ id });
    try {
      showConfig(id, await api<SessionConfig>(user, path`/api/sessions/${id}`));
    } catch (err) {
      setError(describeError(err));
    }
  };

  /**
   * PATCH /api/sessions/{id}: the next turn runs with the new settings. Shown at once; the answer
   * (or a fresh read, on failure) settles it. Sent one after another, and only the last change's
   * answer is shown: an earlier one's answer, arriving after a later click, showed that click
   * undone (its checkbox unchecked again) until the later answer came.
   */
  const configure = (id: string, change: ConfigChange) => {
    const seq = ++configSeq.current;
    const shown = configuring?.config;
    if (shown)
      showConfig(id, {
        ...shown,
        settings: { ...shown.settings, ...change.settings },
        approve_tools: change.approve_tools ?? shown.approve_tools,
      });
    const latest = () => seq === configSeq.current;
    configQueue.current = configQueue.current.then(async () => {
      try {
        const answer = await api<SessionConfig>(user, path`/api/sessions/${id}`, {
          method: "PATCH",
          body: JSON.stringify(change),
        });
        if (latest()) showConfig(id, answer);
        setError(undefined);
      } catch (err) {
        setError(describeError(err));
        const read = await api<SessionConfig>(user, path`/api/sessions/${id}`).catch(() => undefined);
        if (latest()) showConfig(id, read);
      }
    });
    return configQueue.current;
  };

  const remove = async (thread: Thread, name: string) => {
    if (!window.confirm(`Delete “${name}” and everything in it?`)) return;
    try {
      await client.threads.delete(thread.thread_id);
      if (thread.thread_id === current) onSelect(null);
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
      {threads.length === 0 && !error && <p className="hint">No sessions yet for {user}.</p>}
      <ul aria-label={`Sessions of ${user}`}>
        {threads.map((t) => {
          const name = threadTitle(t);
          const count = visibleMessageCount(t.values);
          const open = configuring?.id === t.thread_id ? configuring : undefined;
          return (
            <li key={t.thread_id} className={t.thread_id === current ? "current" : ""} data-testid="session">
              {editing === t.thread_id ? (
                <RenameForm name={name} onDone={(value) => void rename(t.thread_id, value)} />
              ) : (
                <button
                  type="button"
                  className="session-name"
                  aria-current={t.thread_id === current ? "page" : undefined}
                  onClick={() => onSelect(t.thread_id)}
                >
                  {name}
                  {t.status !== "idle" && <span className="badge">{t.status}</span>}
                  <span className="meta">
                    {count !== undefined && `${count} messages · `}
                    {new Date(t.updated_at).toLocaleString()}
                  </span>
                </button>
              )}
              {open &&
                (open.config ? (
                  <SettingsForm config={open.config} name={name} onChange={(c) => void configure(t.thread_id, c)} />
                ) : (
                  <p className="hint">Reading the settings…</p>
                ))}
              <div className="row-actions">
                <button
                  type="button"
                  className="small"
                  aria-expanded={open !== undefined}
                  aria-label={`Settings of ${name}`}
                  onClick={() => void toggleSettings(t.thread_id)}
                >
                  Settings
                </button>
                <button
                  type="button"
                  className="small"
                  aria-label={`Rename ${name}`}
                  onClick={() => setEditing(t.thread_id)}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Delete ${name}`}
                  onClick={() => void remove(t, name)}
                >
                  Delete
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      {more && (
        <button type="button" className="secondary" onClick={() => void load(threads.length)}>
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

/**
 * A session's settings as checkboxes; each change is saved at once and applies from the next turn.
 * "Ask before tools run" is the session's `approve_tools`, every tool ("*") or none; a list of
 * names set through the API shows checked, with the names.
 */
function SettingsForm({
  config,
  name,
  onChange,
}: {
  config: SessionConfig;
  name: string;
  onChange: (change: ConfigChange) => void;
}) {
  const asking = config.approve_tools === "*" || config.approve_tools.length > 0;
  return (
    <fieldset className="session-settings">
      <legend>Settings of {name}</legend>
      {SETTING_LABELS.map(([key, label]) => (
        <label key={key}>
          <input
            type="checkbox"
            checked={config.settings[key]}
            onChange={(e) => onChange({ settings: { [key]: e.target.checked } })}
          />
          {label}
        </label>
      ))}
      <label>
        <input
          type="checkbox"
          checked={asking}
          onChange={(e) => onChange({ approve_tools: e.target.checked ? "*" : [] })}
        />
        Ask before tools run
        {Array.isArray(config.approve_tools) && asking && ` (${config.approve_tools.join(", ")})`}
      </label>
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
