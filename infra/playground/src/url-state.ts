/** What a reload must keep (the user, the session, the panel), kept in the page's query string. */
export interface PageState {
  user: string;
  thread: string | null;
  panel: PanelId;
}

export const PANELS = ["chat", "trace", "memories", "knowledge", "account", "intercom"] as const;
export type PanelId = (typeof PANELS)[number];

const USER_KEY = "playground.user";

/** Thread ids are UUIDs (the Agent Server makes and takes no others). */
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Why `user` cannot be a local user, or undefined when it can. It travels in the x-user-id header,
 * where a browser sends only Latin-1 (fetch throws before any request otherwise); printable ASCII
 * keeps it readable too. The API's own rule (shared/text.ts) is 1 to 128 characters.
 */
export function userIdProblem(user: string): string | undefined {
  if (user.length > 128) return "A user id is at most 128 characters.";
  if (!/^[\x20-\x7e]+$/.test(user) || !user.trim())
    return "A user id here is printable ASCII: it travels in the x-user-id header.";
  return undefined;
}

export function readPageState(): PageState {
  const q = new URLSearchParams(window.location.search);
  const panel = q.get("panel") as PanelId | null;
  // A link is anyone's to write: what it names is checked before any request carries it.
  const user = [q.get("user"), localStorage.getItem(USER_KEY)].find((u) => u && !userIdProblem(u)) ?? "demo";
  const thread = q.get("thread");
  return {
    user,
    thread: thread && THREAD_ID.test(thread) ? thread : null,
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
