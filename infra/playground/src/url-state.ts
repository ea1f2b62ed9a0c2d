/** What a reload must keep (the user, the session, the panel), kept in the page's query string. */
export interface PageState {
  user: string;
  thread: string | null;
  panel: PanelId;
}

export const PANELS = ["chat", "trace", "memories", "knowledge", "account", "intercom"] as const;
export type PanelId = (typeof PANELS)[number];

const USER_KEY = "playground.user";

export function readPageState(): PageState {
  const q = new URLSearchParams(window.location.search);
  const panel = q.get("panel") as PanelId | null;
  return {
    user: q.get("user") || localStorage.getItem(USER_KEY) || "demo",
    thread: q.get("thread"),
    panel: panel && PANELS.includes(panel) ? panel : "chat",
  };
}

export function writePageState(state: PageState): void {
  const q = new URLSearchParams({
    user: state.user,
    panel: state.panel,
    ...(state.thread ? { thread: state.thread } : {}),
  });
  window.history.replaceState(null, "", `?${q}`);
  localStorage.setItem(USER_KEY, state.user);
}
