import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./api-gateway";

export const LOCAL_ADMIN_ID = "991";

interface Part {
  id: string;
  part_type: string;
  body: string;
  author: { type: string; id: string; email?: string };
  created_at: number;
}

interface Conversation {
  id: string;
  contactId: string;
  email: string;
  parts: Part[];
}

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
 *   POST /_local/intercom/conversations  {"email","body"}  -> {"conversation_id","part_id"}
 *   GET  /_local/intercom/actions        every reply, note and snooze received, oldest first
 * The API itself is served under /_local/intercom/api (the client's base URL locally).
 */
export class IntercomStandIn {
  private readonly conversations = new Map<string, Conversation>();
  readonly actions: RecordedAction[] = [];
  private nextId = 1000;

  create(email: string, body: string): { conversation_id: string; part_id: string } {
    const id = String(this.nextId++);
    const partId = String(this.nextId++);
    this.conversations.set(id, {
      id,
      contactId: `contact-${randomUUID()}`,
      email,
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
    return { conversation_id: id, part_id: partId };
  }

  /** A further customer message in a conversation. */
  addUserPart(conversationId: string, body: string): string {
    const c = this.conversations.get(conversationId)!;
    const id = String(this.nextId++);
    c.parts.push({
      id,
      part_type: "comment",
      body: `<p>${body}</p>`,
      author: { type: "user", id: "user-1", email: c.email },
      created_at: now(),
    });
    return id;
  }

  /** Serves the request if it is the stand-in's; false otherwise. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith("/_local/intercom/")) return false;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const body = async () => JSON.parse((await readBody(req))?.toString("utf8") || "{}") as Record<string, unknown>;
    const path = url.pathname.slice("/_local/intercom".length);
    let m: RegExpExecArray | null;

    if (req.method === "POST" && path === "/conversations") {
      const { email, body: text } = await body();
      if (typeof email !== "string" || typeof text !== "string" || !text.trim()) {
        send(400, { error: { code: "invalid_request", message: "email and body are required strings" } });
      } else send(201, this.create(email, text));
    } else if (req.method === "GET" && path === "/actions") {
      send(200, this.actions);
    } else if (req.method === "GET" && (m = /^\/api\/conversations\/([^/]+)$/.exec(path))) {
      const c = this.conversations.get(decodeURIComponent(m[1]!));
      if (!c) send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
      else {
        const [source, ...rest] = c.parts;
        send(200, {
          type: "conversation",
          id: c.id,
          source: { type: "conversation", id: source!.id, body: source!.body, author: source!.author },
          contacts: { type: "contact.list", contacts: [{ type: "contact", id: c.contactId }] },
          conversation_parts: { type: "conversation_part.list", conversation_parts: rest, total_count: rest.length },
        });
      }
    } else if (req.method === "GET" && (m = /^\/api\/contacts\/([^/]+)$/.exec(path))) {
      const c = [...this.conversations.values()].find((x) => x.contactId === decodeURIComponent(m![1]!));
      if (!c) send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
      else send(200, { type: "contact", id: c.contactId, email: c.email });
    } else if (req.method === "POST" && (m = /^\/api\/conversations\/([^/]+)\/(reply|parts)$/.exec(path))) {
      const c = this.conversations.get(decodeURIComponent(m[1]!));
      const b = await body();
      if (!c) {
        send(404, { type: "error.list", errors: [{ code: "not_found", message: "Resource Not Found" }] });
        return true;
      }
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
          id: String(this.nextId++),
          part_type: kind === "note" ? "note" : "comment",
          body: text,
          author: { type: "admin", id: String(b.admin_id) },
          created_at: now(),
        });
      }
      send(200, { type: "conversation", id: c.id });
    } else {
      send(404, {
        type: "error.list",
        errors: [{ code: "not_found", message: `no stand-in route ${req.method} ${path}` }],
      });
    }
    return true;
  }
}

const now = () => Math.floor(Date.now() / 1000);
