import { createIntercomWebhookHandler } from "../../functions/intercom-webhook";
import { createIdempotencyTable } from "../../shared/idempotency";
import { signIntercom } from "../../shared/intercom/signature";
import { OnceMarkers } from "../../shared/stores/once-markers";
import { apiEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
const queued: unknown[] = [];
let handler: ReturnType<typeof createIntercomWebhookHandler>;
const SECRET = "whsec";

beforeAll(async () => {
  harness = await backendsHarness();
  await createIdempotencyTable(harness.dynamo.client, "webhook-markers");
  const notifications = new OnceMarkers(harness.dynamo.client, "webhook-markers");
  handler = createIntercomWebhookHandler(async () => ({
    clientSecret: SECRET,
    queue: { publish: async (m) => void queued.push(m) },
    notifications,
  }));
}, 60_000);
afterAll(() => harness.close());
beforeEach(() => {
  queued.length = 0;
});

const notification = (id: string, topic: string, item: unknown) =>
  JSON.stringify({
    type: "notification_event",
    app_id: "app",
    id,
    topic,
    delivery_attempts: 1,
    created_at: 1700000000,
    data: { type: "notification_event_data", item },
  });
const created = (id: string, authorType = "user") =>
  notification(id, "conversation.user.created", {
    type: "conversation",
    id: "c1",
    source: { id: "p1", author: { type: authorType, id: "a" } },
  });
const call = async (
  body: string,
  signature: string | undefined = signIntercom(body, SECRET),
  extra: { method?: string; base64?: boolean } = {},
) => {
  const res = await handler(
    apiEvent({
      method: extra.method ?? "POST",
      resource: "/webhooks/intercom",
      path: "/webhooks/intercom",
      body: extra.base64 ? Buffer.from(body).toString("base64") : body,
      isBase64Encoded: extra.base64,
      headers: signature ? { "X-Hub-Signature": signature } : {},
    }),
    context(),
  );
  return { status: res!.statusCode, body: res!.body ? JSON.parse(res!.body) : undefined };
};

describe("Intercom webhook", () => {
  it("queues a customer's new conversation and answers 200", async () => {
    expect(await call(created("n-1"))).toEqual({ status: 200, body: { status: "queued" } });
    expect(queued).toEqual([
      { notification_id: "n-1", conversation_id: "c1", part_id: "p1", topic: "conversation.user.created" },
    ]);
  });

  it("verifies the raw bytes of a base64-encoded body", async () => {
    expect((await call(created("n-b64"), undefined, { base64: true })).status).toBe(200);
    expect(queued).toHaveLength(1);
  });

  it("rejects a missing or wrong signature with 401 and queues nothing", async () => {
    expect((await call(created("n-2"), null as unknown as undefined)).status).toBe(401);
    expect((await call(created("n-3"), signIntercom(created("n-3"), "wrong"))).status).toBe(401);
    expect(queued).toEqual([]);
  });

  it("queues a repeated notification once", async () => {
    await call(created("n-4"));
    expect(await call(created("n-4"))).toEqual({ status: 200, body: { status: "duplicate" } });
    expect(queued).toHaveLength(1);
  });

  it("queues Intercom's retry of a delivery whose invocation never answered", async () => {
    // The first invocation stalls in the queue's publish until Lambda stops it: its notification
    // was never queued, so the retry must not be taken for a duplicate.
    let stalls = true;
    const published: unknown[] = [];
    const stalling = createIntercomWebhookHandler(async () => ({
      clientSecret: SECRET,
      queue: {
        publish: (m) => (stalls ? new Promise<void>(() => {}) : Promise.resolve(void published.push(m))),
      },
      notifications: new OnceMarkers(harness.dynamo.client, "webhook-markers"),
    }));
    const body = created("n-stalled");
    const send = () =>
      stalling(
        apiEvent({
          method: "POST",
          resource: "/webhooks/intercom",
          path: "/webhooks/intercom",
          body,
          headers: { "X-Hub-Signature": signIntercom(body, SECRET) },
        }),
        context(),
      );
    void send();
    await new Promise((r) => setTimeout(r, 200));
    stalls = false;
    const retry = await send();
    expect(JSON.parse(retry!.body)).toEqual({ status: "queued" });
    expect(published).toHaveLength(1);
    // Once queued, a further retry is the duplicate.
    expect(JSON.parse((await send())!.body)).toEqual({ status: "duplicate" });
    expect(published).toHaveLength(1);
  });

  it("never starts a run for admin or bot parts, so the agent cannot answer itself", async () => {
    const replied = (id: string, type: string) =>
      notification(id, "conversation.user.replied", {
        type: "conversation",
        id: "c2",
        source: { id: "p0", author: { type: "user", id: "u" } },
        conversation_parts: {
          conversation_parts: [
            { id: "p1", author: { type: "user", id: "u" } },
            { id: "p2", author: { type, id: "x" } },
          ],
        },
      });
    for (const type of ["admin", "bot"])
      expect((await call(replied(`n-${type}`, type))).body).toEqual({
        status: "ignored",
        reason: `part written by ${type}`,
      });
    expect((await call(created("n-admin-source", "admin"))).body.status).toBe("ignored");
    expect(queued).toEqual([]);
    expect((await call(replied("n-user", "user"))).body.status).toBe("queued");
    expect(queued).toEqual([
      { notification_id: "n-user", conversation_id: "c2", part_id: "p2", topic: "conversation.user.replied" },
    ]);
  });

  it("answers Intercom's checks: HEAD, ping, and topics it does not handle", async () => {
    expect((await call("", undefined, { method: "HEAD" })).status).toBe(200);
    expect(await call(notification("n-ping", "ping", { type: "ping", message: "hi" }))).toEqual({
      status: 200,
      body: { status: "pong" },
    });
    expect((await call(notification("n-x", "contact.created", { id: "c" }))).body.status).toBe("ignored");
    // Whatever its item holds: a topic it does not handle is acknowledged, never refused, since
    // Intercom retries a refused notification and can suspend a webhook that keeps failing.
    for (const item of [
      { type: "conversation", id: "c3", source: null },
      { type: "contact", id: 123, custom_attributes: {} },
      {
        type: "conversation",
        id: "c4",
        source: { id: 7, author: null },
        conversation_parts: { conversation_parts: null },
      },
      null,
      [],
    ])
      expect(await call(notification("n-other", "conversation.admin.closed", item))).toEqual({
        status: 200,
        body: { status: "ignored", reason: "topic conversation.admin.closed" },
      });
    const noData = JSON.stringify({ type: "notification_event", id: "n-nodata", topic: "contact.deleted" });
    expect((await call(noData)).body).toEqual({ status: "ignored", reason: "topic contact.deleted" });
    expect((await call("not json at all")).status).toBe(400);
    expect(queued).toEqual([]);
  });
});
