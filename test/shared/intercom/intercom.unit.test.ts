import { IntercomClient, plainText, IntercomError } from "../../../shared/intercom/client";
import { signIntercom, verifyIntercomSignature } from "../../../shared/intercom/signature";
import { recordingServer, type RecordedRequest, type Reply } from "../../support/recording-server";

describe("Intercom webhook signature", () => {
  it("matches the published HMAC-SHA1 test vector", () => {
    // HMAC_SHA1("key", "The quick brown fox jumps over the lazy dog"), the widely published vector.
    expect(signIntercom("The quick brown fox jumps over the lazy dog", "key")).toBe(
      "sha1=de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9",
    );
  });

  it("accepts only the right signature over the exact bytes", () => {
    const body = Buffer.from('{"type":"notification_event","id":"n1"}');
    const good = signIntercom(body, "s3cret");
    expect(verifyIntercomSignature(body, good, "s3cret")).toBe(true);
    expect(verifyIntercomSignature(body, good.toUpperCase().replace("SHA1", "sha1"), "s3cret")).toBe(true);
    expect(verifyIntercomSignature(body, good, "other")).toBe(false);
    expect(verifyIntercomSignature(Buffer.from('{"type":"notification_event", "id":"n1"}'), good, "s3cret")).toBe(
      false,
    );
    expect(verifyIntercomSignature(body, undefined, "s3cret")).toBe(false);
    expect(verifyIntercomSignature(body, "sha256=abc", "s3cret")).toBe(false);
  });
});

describe("Intercom client requests (Intercom REST API 2.11 shapes)", () => {
  let reply: (req: RecordedRequest) => Reply = () => ({ status: 200, body: {} });
  let server: Awaited<ReturnType<typeof recordingServer>>;
  let client: IntercomClient;
  beforeAll(async () => {
    server = await recordingServer((req) => reply(req));
    client = new IntercomClient({ baseUrl: server.url, token: "tok", maxDelayMs: 50 });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const last = () => server.requests[server.requests.length - 1]!;

  it("reads a conversation and a contact with bearer auth and a pinned version", async () => {
    reply = () => ({ status: 200, body: { type: "conversation", id: "123" } });
    await client.getConversation("123");
    // As HTML, which plainText reads: a plain-text body could not tell a typed `a<b and c>d` from markup.
    expect([last().method, last().path, last().query.get("display_as")]).toEqual(["GET", "/conversations/123", null]);
    expect(last().headers.authorization).toBe("Bearer tok");
    expect(last().headers["intercom-version"]).toBe("2.11");
    await client.getContact("c-9");
    expect(last().path).toBe("/contacts/c-9");
  });

  it("replies and notes as the admin, and snoozes through conversation parts", async () => {
    reply = () => ({ status: 200, body: { type: "conversation", id: "123" } });
    await client.reply("123", "991", "comment", "Hello");
    expect([last().method, last().path]).toEqual(["POST", "/conversations/123/reply"]);
    expect(last().body).toEqual({ message_type: "comment", type: "admin", admin_id: "991", body: "Hello" });
    await client.reply("123", "991", "note", "Internal");
    expect(last().body).toMatchObject({ message_type: "note" });
    await client.snooze("123", "991", new Date("2026-01-01T00:00:00Z"));
    expect([last().method, last().path]).toEqual(["POST", "/conversations/123/parts"]);
    expect(last().body).toEqual({ message_type: "snoozed", admin_id: "991", snoozed_until: 1767225600 });
  });

  // A probe's finding: a request Intercom took and never answered held the support run for 300 s
  // (undici's own limit), past its deadline, and the queue behind it.
  it("gives each request its own time limit: a hung read is tried again, a hung customer reply is not", async () => {
    const timed = new IntercomClient({ baseUrl: server.url, token: "tok", maxDelayMs: 10, requestTimeoutMs: 150 });
    reply = () => ({ status: 200, hang: true });
    let started = Date.now();
    await expect(timed.getConversation("123")).rejects.toThrow(/did not answer within 150 ms/);
    expect(server.requests).toHaveLength(4);
    expect(Date.now() - started).toBeLessThan(3_000);
    server.requests.length = 0;
    started = Date.now();
    await expect(timed.reply("123", "991", "comment", "Hello")).rejects.toThrow(/did not answer within 150 ms/);
    expect(server.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  // A review's finding: the time limit and the run's signal also applied to reading the body of a
  // reply Intercom had accepted, and a stop there counted a reply the customer got as failed.
  it("counts a write Intercom answered 2xx as done, however reading its body ends", async () => {
    const failingBody = new IntercomClient({
      baseUrl: server.url,
      token: "tok",
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        return new Response(
          new ReadableStream({
            start(controller) {
              controller.error(new Error("the body's read was stopped"));
            },
          }),
          { status: res.status, headers: res.headers },
        );
      },
    });
    reply = () => ({ status: 200, body: { type: "conversation", id: "123" } });
    await expect(failingBody.reply("123", "991", "comment", "Hello")).resolves.toBeUndefined();
    await expect(failingBody.getConversation("123")).rejects.toThrow(/stopped/);
  });

  it("stops a request at once when the run's signal is aborted, and tries nothing again", async () => {
    const timed = new IntercomClient({ baseUrl: server.url, token: "tok", maxDelayMs: 10, requestTimeoutMs: 10_000 });
    reply = () => ({ status: 200, hang: true });
    const started = Date.now();
    const call = timed.getConversation("123", AbortSignal.timeout(100));
    await expect(call).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it("retries 429 after Retry-After and 5xx with backoff, then gives up with the status", async () => {
    let calls = 0;
    reply = () =>
      ++calls === 1
        ? { status: 429, body: { type: "error.list" }, headers: { "retry-after": "0.01" } }
        : { status: 200, body: { id: "1" } };
    await client.getConversation("1");
    expect(calls).toBe(2);
    reply = () => ({ status: 503, body: { type: "error.list" } });
    server.requests.length = 0;
    await expect(client.getConversation("1")).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(4);
    reply = () => ({ status: 404, body: { type: "error.list", errors: [{ code: "not_found" }] } });
    server.requests.length = 0;
    await expect(client.getConversation("x")).rejects.toBeInstanceOf(IntercomError);
    expect(server.requests).toHaveLength(1);
  });

  it("sends a customer's reply once on a 5xx, which may come after Intercom took it; notes, snoozes and 429 are retried", async () => {
    // A 5xx does not say the write was not made: sent again, the customer could read the reply twice.
    reply = () => ({ status: 502, body: { type: "error.list" } });
    await expect(client.reply("1", "991", "comment", "Hello")).rejects.toMatchObject({ status: 502 });
    expect(server.requests).toHaveLength(1);
    // A note or snooze landing twice does no harm, and one lost would leave the part with nobody.
    server.requests.length = 0;
    await expect(client.reply("1", "991", "note", "Internal")).rejects.toMatchObject({ status: 502 });
    await expect(client.snooze("1", "991", new Date())).rejects.toMatchObject({ status: 502 });
    expect(server.requests).toHaveLength(8);
    // 429 is Intercom refusing the request before acting on it: sent again after Retry-After.
    let calls = 0;
    reply = () =>
      ++calls === 1
        ? { status: 429, body: { type: "error.list" }, headers: { "retry-after": "0.01" } }
        : { status: 200, body: { id: "1" } };
    server.requests.length = 0;
    await client.reply("1", "991", "comment", "Hello");
    expect(server.requests).toHaveLength(2);
  });
});

describe("Intercom's bodies as the agent reads and writes them", () => {
  it("reads what the customer typed, every entity decoded once", () => {
    // As Intercom (and the stand-in) hold it: the customer's text escaped into HTML.
    const stored = `<p>Does &quot;offline mode&quot; work with O'Reilly's &amp;lt;b&amp;gt; tags &amp; &lt;emoji&gt;?</p><p>Line&nbsp;two<br>three</p>`;
    expect(plainText(stored)).toBe(
      `Does "offline mode" work with O'Reilly's &lt;b&gt; tags & <emoji>?\n\nLine\u00a0two\nthree`,
    );
    expect(plainText("&amp;lt;script&amp;gt;")).toBe("&lt;script&gt;");
    expect(plainText(null)).toBe("");
  });

  it("sends plain text as HTML that shows it as written", async () => {
    const bodies: unknown[] = [];
    const client = new IntercomClient({
      token: "t",
      fetch: async (_url, init) => {
        bodies.push(JSON.parse(String(init?.body)).body);
        return new Response("{}", { status: 200 });
      },
    });
    await client.reply(
      "1",
      "991",
      "comment",
      `<img src=x onerror=alert(1)> <a href="javascript:alert(1)">help</a> & more\nnext line`,
    );
    expect(bodies).toEqual([
      "&lt;img src=x onerror=alert(1)&gt; &lt;a href=&quot;javascript:alert(1)&quot;&gt;help&lt;/a&gt; &amp; more<br>next line",
    ]);
    expect(plainText(String(bodies[0]))).toBe(
      `<img src=x onerror=alert(1)> <a href="javascript:alert(1)">help</a> & more\nnext line`,
    );
  });
});

describe("Intercom client retries", () => {
  /** A client whose first `failures` requests fail as `fail` says, and whose waits are recorded. */
  const flaky = (failures: number, fail: () => Response | Promise<never>) => {
    const waits: number[] = [];
    let calls = 0;
    const client = new IntercomClient({
      token: "t",
      sleep: async (ms) => void waits.push(ms),
      fetch: async () => (++calls <= failures ? fail() : new Response('{"id":"1"}', { status: 200 })),
    });
    return { client, waits, calls: () => calls };
  };
  const dropped = () => Promise.reject(new TypeError("fetch failed", { cause: new Error("ECONNRESET") }));

  it("tries reads, notes and snoozes again after a dropped connection, never a customer's reply", async () => {
    for (const call of [
      (c: IntercomClient) => c.getConversation("1"),
      (c: IntercomClient) => c.reply("1", "991", "note", "n"),
      (c: IntercomClient) => c.snooze("1", "991", new Date()),
    ]) {
      const { client, calls } = flaky(1, dropped);
      await expect(call(client)).resolves.toEqual({ id: "1" });
      expect(calls()).toBe(2);
    }
    // Whether a dropped reply reached Intercom is unknown: sent again, the customer could read it twice.
    const { client, calls } = flaky(1, dropped);
    await expect(client.reply("1", "991", "comment", "Hello")).rejects.toThrow(/fetch failed/);
    expect(calls()).toBe(1);
  });

  it("backs off on a 429 whose X-RateLimit-Reset is now or past (the clocks differ), never retrying at once", async () => {
    for (const reset of [Math.floor(Date.now() / 1000), Math.floor(Date.now() / 1000) - 2]) {
      const { client, waits } = flaky(
        2,
        () => new Response('{"type":"error.list"}', { status: 429, headers: { "x-ratelimit-reset": String(reset) } }),
      );
      await client.getConversation("1");
      expect(waits).toEqual([400, 800]);
    }
  });

  it("waits out a 429 until X-RateLimit-Reset, as Intercom's rate-limit docs name the window's end", async () => {
    const reset = Math.floor(Date.now() / 1000) + 4;
    const { client, waits, calls } = flaky(
      1,
      () => new Response('{"type":"error.list"}', { status: 429, headers: { "x-ratelimit-reset": String(reset) } }),
    );
    await client.getConversation("1");
    expect(calls()).toBe(2);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(2_500);
    expect(waits[0]).toBeLessThanOrEqual(4_000);
  });
});
