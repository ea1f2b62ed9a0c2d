import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./api-gateway";
import { sendJson } from "./send-json";

export const LOCAL_ADMIN_ID = "991";

/** Intercom's own API, INTERCOM_API_URL's default. */
const INTERCOM_API = "https://api.intercom.io";

/**
 * How the local support worker reaches Intercom: the stand-in (at `standIn()`, once the stack listens) in place of Intercom's
 * own API, or, when INTERCOM_API_URL names another (a fake that fails on cue, a test workspace's
 * proxy), that one, untouched.
 */
export function localIntercomFetch(configured: string, standIn: () => string): typeof fetch {
  if (configured.replace(/\/+$/, "") !== INTERCOM_API) return (input, init) => fetch(input, init);
  return (input, init) => fetch(String(input).replace(INTERCOM_API, standIn()), init);
}

interface Part {
  id: string;
  part_type: string;
  body: string | null;
  author: { type: string; id: string; email?: string };
  created_at: number;
}

interface Conversation {
  id: string;
  contactId: string;
  email: string;
  /** Intercom's contact role: "user" (identified by the product) or "lead"; absent in state saved before it (users) */
  role?: ContactRole;
  /** the teammate it is assigned to (Intercom's admin_assignee_id), if any */
  assignee?: string;
  parts: Part[];
}

/** A contact the product identified (`user`), or a visitor who typed an email (`lead`). */
export type ContactRole = "user" | "lead";

export interface RecordedAction {
  conversation_id: string;
  kind: "reply" | "note" | "snooze";
  body: string;
  admin_id: string;
  at: string;
}

/**
 * A stand-in for the Intercom REST API the support agent calls, with the two fixed local
 * routes demos and outside checks use:
 *   POST /_local/intercom/conversations  {"email","body","role"?}  -> {"conversation_id","part_id"}
 *   GET  /_local/intercom/actions        every reply, note and snooze received, oldest first
 * The API itself is served under /_local/intercom/api (the client's base URL locally).
 */
/** A request the stand-in refuses with a 400, as Intercom answers a malformed one. */
class BadRequest extends Error {}

interface State {
  nextId: number;
  conversations: Conversation[];
  actions: RecordedAction[];
}

export class IntercomStandIn {
  private readonly conversations = new Map<string, Conversation>();
  readonly actions: RecordedAction[] = [];
  private nextId = 1000;
  private readonly stateFile?: string;

  /**
   * With `stateFile` (the local stack keeps it under DATA_DIR), conversations, actions and the id
   * counter survive a restart: ids never repeat, so a part id the support worker has marked
   * answered is never handed to a new customer message.
   */
  constructor(options: { stateFile?: string } = {}) {
    this.stateFile = options.stateFile;
    if (this.stateFile && existsSync(this.stateFile)) {
      const state = JSON.parse(readFileSync(this.stateFile, "utf8")) as State;
      this.nextId = state.nextId;
      for (const c of state.conversations) this.conversations.set(c.id, c);
      this.actions.push(...state.actions);
    }
  }

  private id(): string {
    return String(this.nextId++);
  }

  /** Written whole to a temporary file and renamed over the old one, so a crash leaves either. */
  private save(): void {
    if (!this.stateFile) return;
    const state: State = {
      nextId: this.nextId,
      conversations: [...this.conversations.values()],
      actions: this.actions,
    };
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(state));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }

  create(email: string, body: string, role: ContactRole = "user"): { conversation_id: string; part_id: string } {
    const id = this.id();
    const partId = this.id();
    this.conversations.set(id, {
      id,
      contactId: `contact-${randomUUID()}`,
      email,
      role,
      parts: [
        {
          id: partId,
          part_type: "comment",
          body: `<p>${body}</p>`,
          author: { type: "user", id: "user-1", email },
          created_at: now(),
        },
      ],
    });
    this.save();
    return { conversation_id: id, part_id: partId };
  }

  /** Whether the stand-in holds the conversation (the local run route's 404 otherwise). */
  has(conversationId: string): boolean {
    return this.conversations.has(conversationId);
  }

  /** A further customer message in a conversation; one with no text (`null`) is an attachment alone. */
  addUserPart(conversationId: string, body: string | null): string {
    const c = this.conversations.get(conversationId)!;
    return this.addPart(c, body === null ? null : `<p>${body}</p>`, { type: "user", id: "user-1", email: c.email });
  }

  /** A teammate's part in a conversation (an admin other than the bot): a reply, or `close` and the like. */
  addAdminPart(conversationId: string, adminId: string, body: string | null, partType = "comment"): string {
    const c = this.conversations.get(conversationId)!;
    return this.addPart(c, body === null ? null : `<p>${body}</p>`, { type: "admin", id: adminId }, partType);
  }

  /** Assigns the conversation to a teammate, as Intercom's inbox does. */
  assign(conversationId: string, adminId: string): void {
    this.conversations.get(conversationId)!.assignee = adminId;
    this.save();
  }

  private addPart(c: Conversation, body: string | null, author: Part["author"], partType = "comment"): string {
    const id = this.id();
    c.parts.push({ id, part_type: partType, body, author, created_at: now() });
    this.save();
    return id;
  }

  /**
   * Serves the request if it is the stand-in's; false otherwise. Never rejects: a malformed body
   * or path is a 400, anything else a 500, and the stack keeps serving.
   */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith("/_local/intercom/")) return false;
    const send = (status: number, body: unknown) => sendJson(res, status, body);
    try {
      await this.route(req, url, send);
    } catch (err) {
      if (err instanceof BadRequest) send(400, { error: { code: "bad_request", message: err.message } });
      else send(500, { error: { code: "internal_error", message: (err as Error).message } });
    }
    return true;
  }

  private async route(req: IncomingMessage, url: URL, send: (status: number, body: unknown) => void): Promise<void> {
    const body = async (): Promise<Record<string, unknown>> => {
      const raw = (await readBody(req))?.toString("utf8") || "{}";
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new BadRequest("the body is not JSON");
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
        throw new BadRequest("the body must be a JSON object");
      return parsed as Record<string, unknown>;
    };
    const param = (raw: string) => {
      try {
        return decodeURIComponent(raw);
      } catch {
        throw new BadRequest(`malformed percent-encoding in "${raw}"`);
      }
    };
    const path = url.pathname.slice("/_local/intercom".length);
    let m: RegExpExecArray | null;

    if (req.method === "POST" && path === "/conversations") {
      const { email, body: text, role = "user" } = await body();
      if (typeof email !== "string" || typeof text !== "string" || !text.trim()) {
        send(400, { error: { code: "invalid_request", message: "email and body are required strings" } });
      } else if (role !== "user" && role !== "lead") {
        send(400, { error: { code: "invalid_request", message: 'role is "user" or "lead"' } });
      } else send(201, this.create(email, text, role));
    } else if (req.method === "GET" && path === "/actions") {
      send(200, this.actions);
    } else if (req.method === "GET" && (m = /^\/api\/conversations\/([^/]+)$/.exec(path))) {
      const c = this.conversations.get(param(m[1]!));
      if (!c) send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
      else {
        const [source, ...rest] = c.parts;
        send(200, {
          type: "conversation",
          id: c.id,
          admin_assignee_id: c.assignee === undefined ? null : Number(c.assignee),
          source: { type: "conversation", id: source!.id, body: source!.body, author: source!.author },
          contacts: { type: "contact.list", contacts: [{ type: "contact", id: c.contactId }] },
          conversation_parts: { type: "conversation_part.list", conversation_parts: rest, total_count: rest.length },
        });
      }
    } else if (req.method === "GET" && (m = /^\/api\/contacts\/([^/]+)$/.exec(path))) {
      const contactId = param(m[1]!);
      const c = [...this.conversations.values()].find((x) => x.contactId === contactId);
      if (!c) send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
      else send(200, { type: "contact", id: c.contactId, role: c.role ?? "user", email: c.email });
    } else if (req.method === "POST" && (m = /^\/api\/conversations\/([^/]+)\/(reply|parts)$/.exec(path))) {
      const c = this.conversations.get(param(m[1]!));
      const b = await body();
      if (!c) return send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
      const kind =
        m[2] === "parts" && b.message_type === "snoozed" ? "snooze" : b.message_type === "note" ? "note" : "reply";
      const text =
        kind === "snooze"
          ? `snoozed until ${new Date(Number(b.snoozed_until) * 1000).toISOString()}`
          : String(b.body ?? "");
      this.actions.push({
        conversation_id: c.id,
        kind,
        body: text,
        admin_id: String(b.admin_id),
        at: new Date().toISOString(),
      });
      if (kind !== "snooze") {
        c.parts.push({
          id: this.id(),
          part_type: kind === "note" ? "note" : "comment",
          body: text,
          author: { type: "admin", id: String(b.admin_id) },
          created_at: now(),
        });
      }
      this.save();
      send(200, { type: "conversation", id: c.id });
    } else {
      send(404, {
        type: "error.list",
        errors: [{ code: "not_found", message: `no stand-in route ${req.method} ${path}` }],
      });
    }
  }
}

const now = () => Math.floor(Date.now() / 1000);
