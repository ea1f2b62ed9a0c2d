import { Client } from "@langchain/langgraph-sdk";
import { type FormEvent, type ReactNode, useCallback, useEffect, useMemo, useState } from "react";
import { connection, ensureSignedIn, identityHeaders } from "./auth/connection";
import { signOut } from "./auth/oidc";
import { Account } from "./Account";
import { Boundary } from "./Boundary";
import { Chat, type TraceTarget } from "./chat/Chat";
import { Intercom } from "./Intercom";
import { Knowledge } from "./Knowledge";
import { Memories } from "./Memories";
import { Sessions } from "./Sessions";
import { panelId, Tabs, tabId } from "./Tabs";
import { Trace } from "./Trace";
import { PANELS, type PageState, type PanelId, readPageState, userIdProblem, writePageState } from "./url-state";

export function App() {
  const reach = connection();
  // Deployed, the user is whoever signed in, and Intercom's stand-in exists only locally.
  const panels: readonly PanelId[] = reach.mode === "local" ? PANELS : PANELS.filter((panel) => panel !== "intercom");
  const [state, setState] = useState<PageState>(() => {
    const read = readPageState();
    return {
      ...read,
      ...(reach.mode === "oidc" ? { user: reach.user.sub } : {}),
      panel: panels.includes(read.panel) ? read.panel : "chat",
    };
  });
  const [traceTarget, setTraceTarget] = useState<TraceTarget>();
  const [sessionsVersion, setSessionsVersion] = useState(0);
  const [showSessions, setShowSessions] = useState(false);
  const update = useCallback((change: Partial<PageState>) => setState((prev) => ({ ...prev, ...change })), []);
  useEffect(() => writePageState(state), [state]);

  // Locally the user is whoever x-user-id names: a new client per user, so switching shows isolation.
  const client = useMemo(
    () =>
      new Client({
        apiUrl: reach.apiUrl,
        defaultHeaders: identityHeaders(state.user),
        onRequest: async (_url, init) => {
          await ensureSignedIn();
          return init;
        },
        // One retry: a playground shows a failure rather than backing off for half a minute.
        callerOptions: { maxRetries: 1 },
      }),
    [reach.apiUrl, state.user],
  );
  const reloadSessions = useCallback(() => setSessionsVersion((v) => v + 1), []);
  const onThreadId = useCallback(
    (thread: string) => {
      update({ thread });
      reloadSessions();
    },
    [update, reloadSessions],
  );
  const select = (thread: string | null) => {
    update({ thread, panel: "chat" });
    setShowSessions(false);
  };

  return (
    <div className="app">
      <header className="topbar">
        <h1>Agent playground</h1>
        {reach.mode === "local" ? (
          <UserSwitch
            user={state.user}
            onChange={(user) => {
              setTraceTarget(undefined);
              update({ user, thread: null });
            }}
          />
        ) : (
          <SignedInAs name={reach.user.name} />
        )}
        <button
          type="button"
          className="secondary sessions-toggle"
          aria-expanded={showSessions}
          aria-controls="sessions-sidebar"
          onClick={() => setShowSessions((v) => !v)}
        >
          Sessions
        </button>
      </header>
      <div className="layout">
        <aside id="sessions-sidebar" className={showSessions ? "open" : ""}>
          {/* Keyed by user, as each panel is: nothing of one user's, not even a late answer, shows for the next. */}
          <Boundary key={state.user} name="sessions">
            <Sessions
              user={state.user}
              client={client}
              current={state.thread}
              version={sessionsVersion}
              onSelect={select}
            />
          </Boundary>
        </aside>
        <main>
          <Tabs panels={panels} current={state.panel} onChange={(panel) => update({ panel })} />
          {/* The chat stays mounted on other tabs: a streaming answer goes on while you look at its trace. */}
          <Panel id="chat" current={state.panel}>
            <Chat
              key={state.user}
              user={state.user}
              client={client}
              threadId={state.thread}
              onThreadId={onThreadId}
              onTurnDone={reloadSessions}
              onShowTrace={(target) => {
                setTraceTarget(target);
                update({ panel: "trace" });
              }}
            />
          </Panel>
          {state.panel === "trace" && (
            <Panel id="trace" current={state.panel}>
              <Trace key={state.user} user={state.user} threadId={state.thread} target={traceTarget} />
            </Panel>
          )}
          {state.panel === "memories" && (
            <Panel id="memories" current={state.panel}>
              <Memories key={state.user} user={state.user} />
            </Panel>
          )}
          {state.panel === "knowledge" && (
            <Panel id="knowledge" current={state.panel}>
              <Knowledge user={state.user} />
            </Panel>
          )}
          {state.panel === "account" && (
            <Panel id="account" current={state.panel}>
              <Account
                key={state.user}
                user={state.user}
                onErased={() => {
                  update({ thread: null });
                  reloadSessions();
                }}
              />
            </Panel>
          )}
          {state.panel === "intercom" && (
            <Panel id="intercom" current={state.panel}>
              <Intercom />
            </Panel>
          )}
        </main>
      </div>
      <footer>
        {reach.mode === "local" ? <LocalNote /> : <p>Signed in through {new URL(reach.config.issuer).host}.</p>}
      </footer>
    </div>
  );
}

/** Honest about the stand-ins: they answer locally unless Bedrock is configured. */
function LocalNote() {
  return (
    <p>
      Local stack: unless <code>BEDROCK_MODEL_ID</code> is set, answers come from an offline rule-based stand-in for
      Bedrock (not a language model), and embeddings from a hashing stand-in (lexical similarity only). Intercom is a
      local stand-in.
    </p>
  );
}

function Panel({ id, current, children }: { id: PanelId; current: PanelId; children: ReactNode }) {
  return (
    <div role="tabpanel" id={panelId(id)} aria-labelledby={tabId(id)} hidden={id !== current} className="panel">
      <Boundary name={`${id} panel`}>{children}</Boundary>
    </div>
  );
}

/** Deployed, the user is the token's: sign-out forgets it in this tab. */
function SignedInAs({ name }: { name: string }) {
  return (
    <div className="user-switch">
      <span>
        Signed in as <strong>{name}</strong>
      </span>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          signOut();
          window.location.assign("/");
        }}
      >
        Sign out
      </button>
    </div>
  );
}

/** Locally, any name is a user: switching shows that sessions and memories are each user's own. */
function UserSwitch({ user, onChange }: { user: string; onChange: (user: string) => void }) {
  const [value, setValue] = useState(user);
  const [problem, setProblem] = useState<string>();
  useEffect(() => setValue(user), [user]);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const next = value.trim();
    const refused = userIdProblem(next);
    setProblem(refused);
    if (!refused && next !== user) onChange(next);
  };
  return (
    <form className="user-switch" onSubmit={onSubmit}>
      <label htmlFor="user-id">User (x-user-id)</label>
      <input
        id="user-id"
        value={value}
        maxLength={128}
        aria-invalid={problem !== undefined}
        aria-describedby={problem ? "user-id-problem" : undefined}
        onChange={(e) => setValue(e.target.value)}
      />
      <button type="submit" className="secondary">
        Switch
      </button>
      {problem && (
        <span id="user-id-problem" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
