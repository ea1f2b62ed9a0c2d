import { Logger } from "@aws-lambda-powertools/logger";
import { randomUUID } from "node:crypto";
import { createChatHandler } from "../../functions/chat";
import { createExtractionHandler } from "../../functions/memory-extraction";
import { createIntercomWebhookHandler } from "../../functions/intercom-webhook";
import { createMemoriesHandler } from "../../functions/memories";
import { createSessionsHandler } from "../../functions/sessions";
import { buildExtractionRuntime } from "../../graph/memory/runtime";
import { MalformedPath, matchResource } from "../../infra/local/api-gateway";
import { queueWithDeadLetters } from "../../infra/local/queue";
import { loadConfig } from "../../shared/config";
import { createIdempotencyTable } from "../../shared/idempotency";
import { signIntercom } from "../../shared/intercom/signature";
import { encodeCursor } from "../../shared/stores/conversations";
import { OnceMarkers } from "../../shared/stores/once-markers";
import { apiEvent, chatEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

// Text that cannot be stored faithfully, and input that used to reach
// a store or a decoder unchecked, is refused at the boundary with a 400 and a code.

let harness: Awaited<ReturnType<typeof backendsHarness>>;
let tableName: string;
beforeAll(async () => {
  harness = await backendsHarness();
  tableName = (await harness.stateTables()).tableName;
  await createIdempotencyTable(harness.dynamo.client, "boundary-markers");
}, 60_000);
afterAll(() => harness.close());

const config = () => loadConfig({ AUTH_MODE: "local", CHECKPOINT_TABLE: tableName });
const parsed = (res: { statusCode: number; body: string } | void) => ({
  status: res!.statusCode,
  body: res!.body ? JSON.parse(res!.body) : undefined,
});

/** Ill-formed or NUL-bearing variants of an otherwise fine text, of our own making. */
const unstorable = (base: string) => [
  `${base}\ud800`, // lone high surrogate at the end
  `\udfff${base}`, // lone low surrogate at the start
  `${base}\udc00\ud83d`, // a pair written backwards
  `${base.slice(0, 1)}\u0000${base.slice(1)}`, // NUL inside
];

describe("Ill-formed Unicode and NUL never reach storage", () => {
  // The runtime is never asked for: a refused request loads nothing and writes nothing.
  const chat = () =>
    createChatHandler(config(), async () => {
      throw new Error("the runtime must not be reached");
    });

  it.each(unstorable("carol"))("refuses user_id %j with 400 invalid_user_id", async (userId) => {
    const res = parsed(await chat()(chatEvent({ message: "hello", user_id: userId }), context()));
    expect(res).toMatchObject({ status: 400, body: { error: { code: "invalid_user_id" } } });
  });

  it.each(unstorable("apollo"))("refuses project_id %j with 400 invalid_project_id", async (projectId) => {
    const res = parsed(await chat()(chatEvent({ message: "hello", project_id: projectId }), context()));
    expect(res).toMatchObject({ status: 400, body: { error: { code: "invalid_project_id" } } });
  });

  it.each(unstorable("remember that my bike is blue"))("refuses message %j with 400 invalid_message", async (m) => {
    const res = parsed(await chat()(chatEvent({ message: m }), context()));
    expect(res).toMatchObject({ status: 400, body: { error: { code: "invalid_message" } } });
  });

  it("accepts well-formed text beyond the BMP (a surrogate pair is fine)", async () => {
    const turns: unknown[] = [];
    const handler = createChatHandler(config(), async () => ({
      chat: {
        reply: async (turn: unknown) => {
          turns.push(turn);
          return { reply: "ok", sessionId: randomUUID(), messageId: "m", trace: [] };
        },
      } as never,
    }));
    const res = parsed(await handler(chatEvent({ message: "🚲 is mine", user_id: "ü-𝒳" }), context()));
    expect(res.status).toBe(200);
    expect(turns).toMatchObject([{ userId: "ü-𝒳", message: "🚲 is mine" }]);
  });

  it("holds the x-user-id header to the body's rule and length cap", async () => {
    const memories = createMemoriesHandler(() => ({
      config: config(),
      dynamo: harness.dynamo.client,
      store: harness.store,
    }));
    const list = (user: string) =>
      memories(
        apiEvent({ method: "GET", resource: "/api/memories", path: "/api/memories", headers: { "x-user-id": user } }),
        context(),
      );
    for (const user of [...unstorable("dave"), "d".repeat(129), "   "]) {
      expect(parsed(await list(user))).toMatchObject({ status: 400, body: { error: { code: "invalid_user_id" } } });
    }
    expect(parsed(await list("d".repeat(128))).status).toBe(200);
  });

  it("dead-letters an extraction message carrying unstorable text, logging why", async () => {
    const cfg = loadConfig({ IDEMPOTENCY_TABLE: `idem-${randomUUID()}` });
    await createIdempotencyTable(harness.dynamo.client, cfg.IDEMPOTENCY_TABLE);
    const runtime = await buildExtractionRuntime({ config: cfg, dynamo: harness.dynamo.client, store: harness.store });
    const { queue, deadLetters: dlq } = queueWithDeadLetters("extraction", {
      visibilityTimeoutMs: 20,
      pollIntervalMs: 5,
      maxReceiveCount: 3,
    });
    // Logs are silent in tests: the reason is read where the handler hands it to the logger.
    const errors = vi.spyOn(Logger.prototype, "error");
    try {
      queue.start(createExtractionHandler(async () => runtime));
      const bodies = [
        { user_id: "eve\ud800", user_message: "I live in Lyon" },
        { user_id: "eve", user_message: "I live in\u0000 Lyon" },
      ].map((b) =>
        JSON.stringify({
          project_id: null,
          session_id: randomUUID(),
          turn_id: randomUUID(),
          assistant_reply: "ok",
          ...b,
        }),
      );
      for (const body of bodies) queue.send(body);
      await queue.drained();
      await queue.stop();
      expect(
        dlq
          .peek()
          .map((m) => m.body)
          .sort(),
      ).toEqual([...bodies].sort());
      // Each one's last receive is logged as an error, with why it can never be processed.
      const reasons = errors.mock.calls
        .filter(([message]) => String(message).includes("dead-letter queue"))
        .map(([, extra]) => String((extra as { reason?: string }).reason));
      expect(reasons.sort()).toEqual([
        "UnusableRecord: invalid message: user_id: must be well-formed Unicode (it holds a lone surrogate)",
        "UnusableRecord: invalid message: user_message: must not contain NUL characters",
      ]);
    } finally {
      errors.mockRestore();
    }
    expect(await harness.store.listMemories("eve", { limit: 10 })).toEqual([]);
  });
});

describe("Bad input gets a 400 with a code, never a 5xx", () => {
  const sessions = () =>
    createSessionsHandler(() => ({
      config: config(),
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
    }));
  const listSessions = (cursor: string) =>
    sessions()(
      {
        ...apiEvent({
          method: "GET",
          resource: "/api/sessions",
          path: "/api/sessions",
          headers: { "x-user-id": "fay" },
        }),
        queryStringParameters: { cursor },
      },
      context(),
    );
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

  it.each([
    ["a crafted pair of strings", b64(["1", "x"])],
    ["an impossible date", b64(["2026-02-30T10:00:00.000Z", randomUUID()])],
    ["a far-off year", b64(["+275760-09-13T00:00:00.000Z", randomUUID()])],
    // JavaScript has a year 0; Postgres's timestamptz does not, and answered 503.
    ["year 0000", b64(["0000-01-01T00:00:00.000Z", randomUUID()])],
    ["a time zone offset", b64(["2026-01-01T00:00:00.000+99:00", randomUUID()])],
    ["a huge number", b64([1e308, randomUUID()])],
    ["a session id that is not a UUID", b64(["2026-01-01T00:00:00.000Z", "'; drop table x"])],
    ["three elements", b64(["2026-01-01T00:00:00.000Z", randomUUID(), 3])],
    ["undecodable base64", "@@@###"],
    ["base64 of non-JSON", Buffer.from("hello").toString("base64url")],
    ["NUL inside", `${b64(["2026-01-01T00:00:00.000Z", randomUUID()])}\u0000`],
  ])("refuses a sessions cursor of %s", async (_, cursor) => {
    expect(parsed(await listSessions(cursor))).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_cursor" } },
    });
  });

  it("still follows a cursor it issued", async () => {
    const cursor = encodeCursor({
      session_id: randomUUID(),
      project_id: null,
      name: "n",
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-02T03:04:05.678Z",
      message_count: 2,
    });
    expect(parsed(await listSessions(cursor))).toMatchObject({ status: 200, body: { sessions: [] } });
  });

  it("refuses NUL or ill-formed text in memory filters", async () => {
    const memories = createMemoriesHandler(() => ({
      config: config(),
      dynamo: harness.dynamo.client,
      store: harness.store,
    }));
    for (const [key, values] of [
      ["category", unstorable("work")],
      ["tag", unstorable("travel")],
    ] as const) {
      for (const value of values) {
        const res = await memories(
          {
            ...apiEvent({
              method: "GET",
              resource: "/api/memories",
              path: "/api/memories",
              headers: { "x-user-id": "gus" },
            }),
            queryStringParameters: { [key]: value },
          },
          context(),
        );
        expect(parsed(res)).toMatchObject({ status: 400, body: { error: { code: `invalid_${key}` } } });
      }
    }
  });

  it.each(["%", "%zz", "%E0%A4%A", "abc%", "%C0%80x", "%ED%A0%80"])(
    "refuses the malformed percent-encoding %j in a path id",
    (segment) => {
      expect(() => matchResource("/api/sessions/{id}", `/api/sessions/${segment}`)).toThrow(MalformedPath);
      expect(() => matchResource("/api/memories/{id}", `/api/memories/${segment}`)).toThrow(MalformedPath);
    },
  );

  it("refuses webhook fields too long or unstorable, and never answers 5xx", async () => {
    const webhook = createIntercomWebhookHandler(async () => ({
      clientSecret: "s",
      queue: { publish: async () => {} },
      notifications: new OnceMarkers(harness.dynamo.client, "boundary-markers"),
    }));
    const send = (
      id: string,
      item: Record<string, unknown> = { id: "c1", source: { id: "p1", author: { type: "user" } } },
    ) => {
      const body = JSON.stringify({
        type: "notification_event",
        id,
        topic: "conversation.user.created",
        data: { item: { type: "conversation", ...item } },
      });
      return webhook(
        apiEvent({
          method: "POST",
          resource: "/webhooks/intercom",
          path: "/webhooks/intercom",
          body,
          headers: { "X-Hub-Signature": signIntercom(body, "s") },
        }),
        context(),
      );
    };
    for (const res of [
      await send("n".repeat(5000)),
      await send("n".repeat(2049)),
      await send("notif\ud800"),
      await send("notif-ok", { id: "c\u0000", source: { id: "p1", author: { type: "user" } } }),
      await send("notif-ok", { id: "c1", source: { id: "p".repeat(3000), author: { type: "user" } } }),
    ]) {
      expect(parsed(res)).toMatchObject({ status: 400, body: { error: { code: "invalid_notification" } } });
    }
    expect(parsed(await send(`notif-${randomUUID()}`))).toMatchObject({ status: 200, body: { status: "queued" } });
  });
});
