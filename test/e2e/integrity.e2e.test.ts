import { partitionItems } from "../support/scan";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FUNCTIONS } from "../../infra/manifest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { signIntercom } from "../../shared/intercom/signature";
import { localStackDynamo } from "../support/local-stack";
import { type RawReply, rawRequest } from "../support/raw-request";

// Integrity on the local stack over HTTP: DELETE racing a streaming turn, and a
// property-based fuzz pass over every API route (bodies, headers, query strings, path ids).

const dataDir = mkdtempSync(join(tmpdir(), "agent-integrity-"));
let stack: LocalStack;
// A short generation pace: streams still take a while (so DELETE lands mid-turn), fuzzed turns stay quick.
const env = { DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT", OFFLINE_STREAM_DELAY_MS: "5" };

beforeAll(async () => {
  stack = await startLocalStack(env);
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type Reply = RawReply;

/** A raw HTTP request: the path, headers and body go out exactly as given (fetch would normalise them). */
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string) =>
  rawRequest(stack.url, method, path, headers, body);

const json = (reply: Reply) => JSON.parse(reply.text);

describe("A deleted session never comes back", () => {
  it("races DELETE against a streaming turn 20 times: after a 204 nothing of the session remains", async () => {
    const { client: dynamo, table } = localStackDynamo(stack);
    const user = { "x-user-id": "racer", "content-type": "application/json" };
    let deleted = 0;
    for (let round = 0; round < 20; round++) {
      const first = json(await send("POST", "/api/chat", user, JSON.stringify({ message: "hi" })));
      const sessionId: string = first.session_id;
      const streaming = send(
        "POST",
        "/api/chat/stream",
        user,
        JSON.stringify({
          message: `round ${round}: tell me about rivers, lakes, mountains and the sea`,
          session_id: sessionId,
        }),
      );
      // Vary where the DELETE lands: at once, or after a few event-loop turns into the stream.
      for (let i = 0; i < round % 4; i++) await new Promise((r) => setImmediate(r));
      const removal = await send("DELETE", `/api/sessions/${sessionId}`, user);
      const stream = await streaming;
      expect([204, 409]).toContain(removal.status);
      expect(stream.status === 200 || stream.status === 404 || stream.status === 409).toBe(true);
      if (removal.status !== 204) continue;
      deleted++;
      const list = json(await send("GET", "/api/sessions?limit=100", user));
      expect(list.sessions.map((s: { session_id: string }) => s.session_id)).not.toContain(sessionId);
      expect((await send("GET", `/api/sessions/${sessionId}/messages`, user)).status).toBe(404);
      expect((await send("DELETE", `/api/sessions/${sessionId}`, user)).status).toBe(404);
      const next = await send("POST", "/api/chat", user, JSON.stringify({ message: "back?", session_id: sessionId }));
      expect(next.status).toBe(404);
      expect(await partitionItems(dynamo, table, sessionId)).toEqual([]);
    }
    dynamo.destroy();
    expect(deleted).toBeGreaterThan(0);
  }, 120_000);
});

describe("fuzz: every route answers bad input with a 4xx and an error code, and stays up", () => {
  const SECRET = "local-dev-secret"; // the stack's development secret (infra/local/stack.ts)

  /** A path id: UUIDs, arbitrary text percent-encoded, and raw (often malformed) percent-encodings. */
  const pathId = fc.oneof(
    fc.uuid(),
    fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => encodeURIComponent(s) || "x"),
    fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "%ED%A0%80", "%C0%AF", "..", "%2F", "a%"),
    fc
      .array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 })
      .map((bytes) => bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
    fc.string({ unit: fc.constantFrom(..."abcXYZ019-_.~%"), maxLength: 300 }).map((s) => s || "y"),
  );
  /** Query values: printable text, raw percent-encoded bytes (invalid UTF-8, NUL), long values. */
  const queryValue = fc.oneof(
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc
      .array(fc.integer({ min: 0, max: 255 }), { maxLength: 10 })
      .map((bytes) => bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
    fc.constantFrom("0", "-1", "1e309", "NaN", "201", "5", "%00", "W10", "WyIxIiwieCJd"),
    fc.nat({ max: 2000 }).map((n) => "a".repeat(n)),
  );
  const query = fc
    .dictionary(fc.constantFrom("limit", "cursor", "category", "tag", "trace", "x"), queryValue, { maxKeys: 4 })
    .map((q) => {
      const parts = Object.entries(q).map(([k, v]) => `${k}=${v}`);
      return parts.length ? `?${parts.join("&")}` : "";
    });
  /** Header values Node can send: tab, printable ASCII and Latin-1. */
  const headerValue = fc.oneof(
    fc.string({
      unit: fc
        .integer({ min: 0x20, max: 0xff })
        .filter((c) => c !== 0x7f)
        .map((c) => String.fromCharCode(c)),
      maxLength: 200,
    }),
    fc.constantFrom("", " ", "anonymous", "u".repeat(129), "u".repeat(128)),
  );
  const headers = fc.record(
    {
      "x-user-id": headerValue,
      "content-type": fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", ""),
      "x-hub-signature": headerValue,
    },
    { requiredKeys: [] },
  );
  /** Chat-shaped bodies with each field drawn from anything, including lone surrogates and NUL. */
  const anyText = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.string({ maxLength: 60 }),
    fc.constantFrom("x\ud800", "\udc00", "a\u0000b", "   ", "", "hi"),
    fc.nat({ max: 20_000 }).map((n) => "é".repeat(n)),
  );
  const field = fc.oneof(anyText, fc.jsonValue({ maxDepth: 2 }), fc.uuid());
  const chatBody = fc.record(
    {
      message: field,
      session_id: field,
      user_id: field,
      project_id: field,
      if_busy: fc.oneof(field, fc.constantFrom("queue", "reject")),
    },
    { requiredKeys: [] },
  );
  const notificationBody = fc.record(
    {
      type: fc.oneof(fc.constant("notification_event"), anyText),
      id: fc.oneof(
        anyText,
        fc.nat({ max: 6000 }).map((n) => "n".repeat(n)),
      ),
      topic: fc.oneof(fc.constantFrom("ping", "conversation.user.created", "conversation.user.replied", "x"), anyText),
      data: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.record({
          item: fc.record({ id: field, source: fc.record({ id: field, author: fc.record({ type: field }) }) }),
        }),
      ),
    },
    { requiredKeys: [] },
  );
  const body = fc.oneof(
    chatBody.map((b) => JSON.stringify(b)),
    notificationBody.map((b) => JSON.stringify(b)),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
    fc.constantFrom("", "null", "{", '{"message":"hi"}', '{"message":"remember that my tea is green"}'),
  );
  /** Every route the deployment declares (infra/manifest.ts), path ids drawn from pathId, plus unrouted methods. */
  const declared = FUNCTIONS.flatMap((f) => f.routes ?? []);
  const route: fc.Arbitrary<[string, string]> = fc.oneof(
    ...declared.map((r) =>
      (r.path.includes("{id}") ? pathId.map((id) => r.path.replace("{id}", id)) : fc.constant(r.path)).map(
        (path): [string, string] => [r.method, path],
      ),
    ),
    fc.tuple(
      fc.constantFrom("PUT", "PATCH", "HEAD"),
      fc.constantFrom(...declared.map((r) => r.path.replace("{id}", "x"))),
    ),
  );
  const requestArb = fc.record({ route, query, headers, body, sign: fc.boolean() });

  /** What every answer must be: no 5xx; an error with a code; a stream whose error events carry one. */
  function check(reply: Reply, method: string) {
    expect(reply.status, reply.text).toBeLessThan(500);
    if (method === "HEAD" || reply.status === 204) return;
    if (reply.contentType.startsWith("text/event-stream")) {
      const events = reply.text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)));
      for (const e of events.filter((e) => e.type === "error")) {
        expect(typeof e.code).toBe("string");
        expect(e.code).not.toBe("internal_error");
      }
      return;
    }
    const parsed = JSON.parse(reply.text);
    if (reply.status >= 400) {
      expect(typeof parsed.error?.code, reply.text).toBe("string");
      expect(typeof parsed.error?.message).toBe("string");
    }
  }

  it("over 2,000 generated requests", async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async ({ route: [method, path], query: q, headers: h, body: b, sign }) => {
        const payload = method === "GET" || method === "DELETE" || method === "HEAD" ? undefined : b;
        const out: Record<string, string> = { ...h };
        if (sign && payload !== undefined) out["x-hub-signature"] = signIntercom(Buffer.from(payload), SECRET);
        if (out["content-type"] === "") delete out["content-type"];
        check(await send(method, `${path}${q}`, out, payload), method);
      }),
      { numRuns: 2000, seed: Number(process.env.FUZZ_SEED ?? 1414) },
    );
    expect((await send("GET", "/health")).status).toBe(200);
  }, 300_000);
});
