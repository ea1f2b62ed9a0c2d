import { connection, ensureSignedIn, identityHeaders } from "./auth/connection";

/**
 * The plain `/api/...` routes and the local stand-ins' `/_local/...` routes, as the playground calls
 * them. Locally the page is served by the stack it talks to, and there is no authorizer: `x-user-id`
 * names the user (shared/identity.ts), which is how the user switch works. Deployed, the API is
 * API Gateway's URL and the signed-in user's token goes with every call (./auth/connection.ts).
 */

/** An answer that was not 2xx, with the API's `{"error":{"code","message"}}` when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * A path with each value put in as one encoded segment (path`/api/sessions/${id}/files`): an id,
 * wherever it came from, cannot climb to another route with `../` or end the path with `?`.
 */
export function path(parts: TemplateStringsArray, ...values: string[]): string {
  return parts.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(values[i]!) : ""), "");
}

export async function api<T>(user: string, path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(identityHeaders(user))) headers.set(name, value);
  if (typeof init.body === "string" && !headers.has("content-type")) headers.set("content-type", "application/json");
  await ensureSignedIn();
  const response = await fetch(`${connection().apiUrl}${path}`, { ...init, headers });
  const text = await response.text();
  if (!response.ok) throw errorFrom(response.status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The API's error body, or the status line when the body is something else (a proxy's page). */
export function errorFrom(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } | string; message?: string };
    if (body.error && typeof body.error === "object")
      return new ApiError(status, body.error.code ?? `http_${status}`, body.error.message ?? text);
    if (typeof body.error === "string") return new ApiError(status, body.error, body.message ?? "");
  } catch {
    // not JSON: fall through
  }
  return new ApiError(status, `http_${status}`, text.slice(0, 300) || `HTTP ${status}`);
}

/**
 * Whatever a failed call threw, as a code and a message: ours, the SDK's HTTPError (`status` and
 * the body as `text`), a stream's `event: error` ({error, message}), or a plain Error.
 */
export function describeError(err: unknown): { status?: number; code: string; message: string } {
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message };
  const e = err as { status?: unknown; text?: unknown; error?: unknown; message?: unknown; name?: unknown };
  if (typeof e?.status === "number" && typeof e.text === "string") {
    const parsed = errorFrom(e.status, e.text);
    return { status: e.status, code: parsed.code, message: parsed.message };
  }
  if (typeof e?.error === "string") return { code: e.error, message: String(e.message ?? "") };
  if (typeof e?.name === "string" && e.name === "StreamError")
    return { code: "stream_error", message: String(e.message ?? "") };
  return { code: "error", message: err instanceof Error ? err.message : String(err) };
}

// The API's own types (type-only imports: nothing of the server is bundled into the page).
import type { SessionSettings } from "../../../shared/session-settings";
import type { TraceStep } from "../../../shared/stores/conversation-types";

export type { SessionSettings, TraceStep };

export interface TranscriptMessage {
  role: "user" | "assistant";
  content: string;
  created_at: string;
  trace?: TraceStep[];
}

export interface Memory {
  id: string;
  content: string;
  category: string | null;
  tags: string[];
  created_at: string;
  /** set when a newer memory replaced this one (listed with ?superseded=1) */
  superseded_by?: string;
}

export interface KnowledgeDocument {
  source: string;
  status: "processing" | "ingested" | "skipped" | "failed" | "deleted" | null;
  chunks: number;
  reason: string | null;
  updated_at: string;
}

export interface KnowledgeHit {
  source: string;
  content: string;
  score: number;
}
