import { createHmac, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody } from "../../shared/http";
import { readBody } from "./api-gateway";
import type { IntercomStandIn } from "./intercom";
import { sendJson } from "./send-json";

const PATH = "/_local/intercom/customer";

/**
 * A customer writing in, as Intercom shows it to the app: the stand-in gets the conversation, then
 * the webhook gets `conversation.user.created`, signed with the app's client secret, over HTTP
 * like Intercom's own delivery. The playground calls this (a browser must not hold the secret);
 * the stand-in's plain POST /_local/intercom/conversations still creates without notifying.
 *   POST /_local/intercom/customer {"email","body"} -> 201 {"conversation_id","part_id","webhook_status"}
 */
export class IntercomCustomer {
  constructor(
    private readonly intercom: IntercomStandIn,
    private readonly options: { clientSecret: string; webhookUrl: () => string },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (url.pathname !== PATH) return false;
    const send = (status: number, body: unknown) => sendJson(res, status, body);
    if (req.method !== "POST") send(405, errorBody("method_not_allowed", "POST only"));
    else await this.write(req, send);
    return true;
  }

  private async write(req: IncomingMessage, send: (status: number, body: unknown) => void): Promise<void> {
    let input: { email?: unknown; body?: unknown };
    try {
      input = JSON.parse((await readBody(req))?.toString("utf8") || "{}");
    } catch {
      return send(400, errorBody("invalid_json", "the body is not JSON"));
    }
    const email = typeof input?.email === "string" ? input.email.trim() : "";
    const text = typeof input?.body === "string" ? input.body.trim() : "";
    if (!email || !text) return send(400, errorBody("invalid_request", "email and body are required strings"));
    const created = this.intercom.create(email, escapeHtml(text));
    try {
      send(201, { ...created, webhook_status: await this.notify(created.conversation_id, created.part_id) });
    } catch (err) {
      send(502, errorBody("webhook_failed", `the webhook could not be reached: ${(err as Error).message}`));
    }
  }

  private async notify(conversationId: string, partId: string): Promise<number> {
    const body = JSON.stringify({
      type: "notification_event",
      id: `notif-${randomUUID()}`,
      topic: "conversation.user.created",
      data: {
        item: {
          type: "conversation",
          id: conversationId,
          source: { id: partId, author: { type: "user", id: "user-1" } },
        },
      },
    });
    const signature = createHmac("sha1", this.options.clientSecret).update(body).digest("hex");
    const response = await fetch(this.options.webhookUrl(), {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature": `sha1=${signature}` },
      body,
    });
    return response.status;
  }
}

/** The stand-in stores bodies as Intercom does, HTML; a customer's text is text. */
const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
