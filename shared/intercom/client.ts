/** The parts of Intercom's REST API the support agent uses (API version 2.11). */
export interface IntercomPart {
  id: string;
  part_type: string;
  body: string | null;
  author: { type: "user" | "lead" | "admin" | "bot" | "contact" | "team"; id: string; email?: string };
  created_at: number;
}

export interface IntercomConversation {
  id: string;
  source: { id: string; body: string; author: IntercomPart["author"] };
  contacts: { contacts: { id: string }[] };
  conversation_parts: { conversation_parts: IntercomPart[] };
}

export interface IntercomContact {
  id: string;
  /** "user": a contact the product identified; "lead": a visitor, whose email is whatever they typed */
  role?: string;
  email: string | null;
}

export class IntercomError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface IntercomClientOptions {
  baseUrl?: string;
  /** the access token, or where to read it on each request (a rotated token is then picked up) */
  token: string | (() => Promise<string>);
  version?: string;
  fetch?: typeof fetch;
  maxAttempts?: number;
  /** cap on a single wait, whatever Retry-After says */
  maxDelayMs?: number;
}

/**
 * A small fetch client: bearer token, a pinned Intercom-Version, and retries on 429 (and 5xx,
 * except for a reply the customer reads) that honour Retry-After (seconds), else exponential backoff.
 */
export class IntercomClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: IntercomClientOptions) {
    this.baseUrl = (options.baseUrl ?? "https://api.intercom.io").replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
  }

  getConversation(id: string): Promise<IntercomConversation> {
    return this.request("GET", `/conversations/${encodeURIComponent(id)}?display_as=plaintext`);
  }

  getContact(id: string): Promise<IntercomContact> {
    return this.request("GET", `/contacts/${encodeURIComponent(id)}`);
  }

  /** A reply the customer sees (`comment`) or an internal note (`note`), as the bot admin. */
  reply(conversationId: string, adminId: string, messageType: "comment" | "note", body: string): Promise<unknown> {
    return this.request(
      "POST",
      `/conversations/${encodeURIComponent(conversationId)}/reply`,
      { message_type: messageType, type: "admin", admin_id: adminId, body },
      // Only what the customer reads is never sent twice: a note the team reads twice, or a second
      // snooze, does no harm, and a note lost to one 5xx would leave the part with nobody.
      { retryServerErrors: messageType === "note" },
    );
  }

  snooze(conversationId: string, adminId: string, until: Date): Promise<unknown> {
    return this.request(
      "POST",
      `/conversations/${encodeURIComponent(conversationId)}/parts`,
      { message_type: "snoozed", admin_id: adminId, snoozed_until: Math.floor(until.getTime() / 1000) },
      { retryServerErrors: true },
    );
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    { retryServerErrors = method === "GET" }: { retryServerErrors?: boolean } = {},
  ): Promise<T> {
    const attempts = this.options.maxAttempts ?? 4;
    const token = typeof this.options.token === "string" ? this.options.token : await this.options.token();
    for (let attempt = 1; ; attempt++) {
      const res = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          "Intercom-Version": this.options.version ?? "2.11",
          Accept: "application/json",
          ...(body ? { "Content-Type": "application/json" } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (res.ok) return (await res.json()) as T;
      // 429 is a refusal before Intercom acted. A 5xx is not: a write it answers so may have landed,
      // so it is retried only where landing twice does no harm (reads, notes, snoozes).
      const retriable = res.status === 429 || (res.status >= 500 && retryServerErrors);
      if (!retriable || attempt >= attempts) {
        throw new IntercomError(
          res.status,
          `Intercom ${method} ${path} failed with ${res.status}: ${(await res.text()).slice(0, 300)}`,
        );
      }
      const retryAfter = Number(res.headers.get("retry-after"));
      const delay = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 200 * 2 ** attempt;
      await new Promise((r) => setTimeout(r, Math.min(delay, this.options.maxDelayMs ?? 10_000)));
    }
  }
}

/** Intercom bodies are HTML; the agent reads and writes plain text. */
export const plainText = (html: string | null | undefined) =>
  (html ?? "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .trim();
