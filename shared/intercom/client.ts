import { htmlOfText, textOfHtml } from "../html-text";

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
  /** the teammate the conversation is assigned to, if any (Intercom sends an id, or null) */
  admin_assignee_id?: string | number | null;
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
    /** Intercom's status, or 0 when it did not answer (a dropped connection, or no answer in time) */
    readonly status: number,
    message: string,
    /**
     * Nothing of the request can have landed twice by trying it again later: a 429 (a refusal
     * before Intercom acted), or a read, note or snooze that failed. A delivery that met one is
     * retried whole (SQS) rather than handed to a person; a customer's reply that may have landed
     * (a 5xx, no answer) is not.
     */
    readonly retriable = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface IntercomClientOptions {
  baseUrl?: string;
  /** the access token, or where to read it on each request (a rotated token is then picked up) */
  token: string | (() => Promise<string>);
  version?: string;
  fetch?: typeof fetch;
  maxAttempts?: number;
  /** cap on a single wait, whatever Retry-After or X-RateLimit-Reset says */
  maxDelayMs?: number;
  /** how a wait between attempts is made (tests record them) */
  sleep?: (ms: number) => Promise<void>;
  /** how long one request may take before it counts as a dropped connection (default 10 s) */
  requestTimeoutMs?: number;
}

/**
 * A small fetch client: bearer token, a pinned Intercom-Version, and retries on 429 (and on a 5xx
 * or a failed connection, except for a reply the customer reads). A 429 waits for the window
 * Intercom names (X-RateLimit-Reset, or Retry-After), else backs off exponentially.
 */
export class IntercomClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: IntercomClientOptions) {
    this.baseUrl = (options.baseUrl ?? "https://api.intercom.io").replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
  }

  // Each call takes the run's signal: a run stopped at its deadline stops its request too.

  getConversation(id: string, signal?: AbortSignal): Promise<IntercomConversation> {
    // Bodies as Intercom stores them, HTML (plainText reads them): asked as plain text, a customer's
    // `a<b and c>d` could not be told from markup.
    return this.request("GET", `/conversations/${encodeURIComponent(id)}`, undefined, { signal });
  }

  getContact(id: string, signal?: AbortSignal): Promise<IntercomContact> {
    return this.request("GET", `/contacts/${encodeURIComponent(id)}`, undefined, { signal });
  }

  /**
   * A reply the customer sees (`comment`) or an internal note (`note`), as the bot admin. `text` is
   * plain text: Intercom reads a reply's body as HTML, so it is sent escaped, and a draft quoting
   * markup (from a document, or the customer) shows as written rather than as markup.
   */
  reply(
    conversationId: string,
    adminId: string,
    messageType: "comment" | "note",
    text: string,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.request(
      "POST",
      `/conversations/${encodeURIComponent(conversationId)}/reply`,
      { message_type: messageType, type: "admin", admin_id: adminId, body: htmlOfText(text) },
      // Only what the customer reads is never sent twice: a note the team reads twice, or a second
      // snooze, does no harm, and a note lost to one 5xx or dropped connection would leave the
      // part with nobody.
      { retryServerErrors: messageType === "note", signal },
    );
  }

  snooze(conversationId: string, adminId: string, until: Date, signal?: AbortSignal): Promise<unknown> {
    return this.request(
      "POST",
      `/conversations/${encodeURIComponent(conversationId)}/parts`,
      { message_type: "snoozed", admin_id: adminId, snoozed_until: Math.floor(until.getTime() / 1000) },
      { retryServerErrors: true, signal },
    );
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    { retryServerErrors = method === "GET", signal }: { retryServerErrors?: boolean; signal?: AbortSignal } = {},
  ): Promise<T> {
    const timeoutMs = this.options.requestTimeoutMs ?? 10_000;
    const attempts = this.options.maxAttempts ?? 4;
    const token = typeof this.options.token === "string" ? this.options.token : await this.options.token();
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const wait = (ms: number) => sleep(Math.min(ms, this.options.maxDelayMs ?? 10_000));
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      let res: Response;
      // A request Intercom took and never answered would otherwise hold the run until undici's own
      // limit (300 s), past the run's deadline, and the queue behind it.
      const limit = AbortSignal.timeout(timeoutMs);
      try {
        res = await this.fetch(`${this.baseUrl}${path}`, {
          signal: signal ? AbortSignal.any([signal, limit]) : limit,
          method,
          headers: {
            Authorization: `Bearer ${token}`,
            "Intercom-Version": this.options.version ?? "2.11",
            Accept: "application/json",
            ...(body ? { "Content-Type": "application/json" } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
      } catch (caught) {
        // The run stopped: nothing is tried again.
        if (signal?.aborted) throw caught;
        const err = new IntercomError(
          0,
          limit.aborted
            ? `Intercom ${method} ${path} did not answer within ${timeoutMs} ms`
            : `Intercom ${method} ${path} failed: ${(caught as Error).message}`,
          retryServerErrors,
          { cause: caught },
        );
        // A dropped connection, or no answer in time, says no more than a 5xx whether a write
        // landed: retried as one.
        if (!retryServerErrors || attempt >= attempts) throw err;
        await wait(200 * 2 ** attempt);
        continue;
      }
      if (res.ok) {
        // A write Intercom answered 2xx has landed, whatever becomes of its body (the time limit or
        // the run's signal may stop reading it): a reply the customer got must not count as failed.
        if (method === "GET") return (await res.json()) as T;
        return (await res.json().catch(() => undefined)) as T;
      }
      // 429 is a refusal before Intercom acted. A 5xx is not: a write it answers so may have landed,
      // so it is retried only where landing twice does no harm (reads, notes, snoozes).
      const retriable = res.status === 429 || (res.status >= 500 && retryServerErrors);
      if (!retriable || attempt >= attempts) {
        throw new IntercomError(
          res.status,
          `Intercom ${method} ${path} failed with ${res.status}: ${(await res.text()).slice(0, 300)}`,
          retriable,
        );
      }
      await res.body?.cancel();
      // The window's end when Intercom names one, never less than the backoff: a reset this second
      // (or past, by the clocks' difference) would otherwise spend every attempt at once.
      const backoff = 200 * 2 ** attempt;
      await wait(res.status === 429 ? Math.max(rateLimitWait(res.headers) ?? 0, backoff) : backoff);
    }
  }
}

/**
 * How long a 429 asks to wait, in ms: until X-RateLimit-Reset (the UNIX second Intercom's window
 * starts again, as its rate-limit docs name it), else Retry-After (seconds); undefined when it says neither.
 */
function rateLimitWait(headers: Headers, now = Date.now()): number | undefined {
  const reset = Number(headers.get("x-ratelimit-reset"));
  if (headers.get("x-ratelimit-reset") && Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - now);
  const retryAfter = Number(headers.get("retry-after"));
  return Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
}

/** Intercom bodies are HTML; the agent reads plain text: what the customer wrote, decoded once. */
export const plainText = (html: string | null | undefined) => textOfHtml(html ?? "").trim();
