import fc from "fast-check";
import { request } from "node:http";
import { isStorableText } from "../../shared/text";
import { localStackForTests } from "../support/local-stack";

// A property-based pass over the files routes (their request schemas and path ids) and the
// local-only routes (the attachments and documents buckets behind signed URLs, the Intercom
// stand-in, the playground's files), with bodies that are cut off half-way by a client that
// drops the connection. Every answer is an error with a status below 500 or a success, and the
// stack still answers afterwards, with no rejection left unhandled.
const local = localStackForTests("files-fuzz", { OFFLINE_STREAM_DELAY_MS: "0" });
const SEED = Number(process.env.FUZZ_SEED ?? 2727);

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on("unhandledRejection", onUnhandled));
afterAll(() => process.off("unhandledRejection", onUnhandled));

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

/**
 * A raw request: path, headers and body exactly as given. With `abortAfter`, only that many bytes
 * of the body go out before the client destroys the socket; the answer is then undefined.
 */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  abortAfter?: number,
): Promise<Reply | undefined> {
  return new Promise((resolve, reject) => {
    const port = new URL(local.stack.url).port;
    const req = request({ host: "127.0.0.1", port, method, path, headers, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      res.on("error", () => resolve(undefined));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    if (abortAfter === undefined || body === undefined) {
      req.on("error", reject);
      req.end(body);
      return;
    }
    req.on("error", () => resolve(undefined));
    req.on("close", () => resolve(undefined));
    req.flushHeaders();
    req.write(body.subarray(0, abortAfter), () => setTimeout(() => req.destroy(), 5));
  });
}

const json = (method: string, path: string, user: string, body?: unknown) =>
  send(
    method,
    path,
    { "content-type": "application/json", "x-user-id": user },
    body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
  ).then((r) => ({ status: r!.status, body: r!.text ? JSON.parse(r!.text) : undefined }));

/** Text of every kind a client may send: lone surrogates, NUL, controls, slashes, long, empty. */
const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom("a\ud800.csv", "\udc00.png", "a\u0000b.csv", "a/b.csv", "..", "", " ", "x.csv", "données.tsv"),
  fc.nat({ max: 400 }).map((n) => `${"n".repeat(n)}.csv`),
);
/** A path id: UUIDs (real ones included), text percent-encoded, and raw (often malformed) encodings. */
const pathId = (real: () => string[]) =>
  fc.oneof(
    fc.uuid(),
    fc.constant(null).map(() => fc.sample(fc.constantFrom(...real()), 1)[0]!),
    fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s) || "x"),
    fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "%ED%A0%80", "..", "%2F", "a%"),
  );

describe("fuzz: the files routes and the local-only routes answer errors as errors, and stay up", () => {
  const sessions: string[] = [];
  const files: string[] = [];
  const users = ["ann", "bob"];

  beforeAll(async () => {
    for (const user of users) {
      const session = (await json("POST", "/api/chat", user, { message: "hi" })).body.session_id as string;
      sessions.push(session);
      const created = await json("POST", `/api/sessions/${session}/files`, user, {
        name: "kv.csv",
        media_type: "text/csv",
        bytes: 8,
      });
      files.push(created.body.file_id);
    }
  });

  /** What every answer must be: below 500, and an API error says its code. */
  function check(reply: Reply | undefined, method: string, path: string) {
    if (!reply) return; // the client dropped the connection: no answer to check
    expect(reply.status, `${method} ${path}: ${reply.text.slice(0, 200)}`).toBeLessThan(500);
    if (method !== "HEAD" && reply.status >= 400 && reply.contentType.startsWith("application/json")) {
      const parsed = JSON.parse(reply.text);
      expect(typeof (parsed.error?.code ?? parsed.errors?.[0]?.code), reply.text).toBe("string");
    }
  }

  it("the files routes: any body, path id and user; a created file's name is always storable text", async () => {
    const body = fc.oneof(
      fc
        .record(
          {
            name: fc.oneof(anyText, fc.jsonValue({ maxDepth: 1 })),
            media_type: fc.oneof(
              fc.constantFrom("text/csv", "text/tab-separated-values", "image/png", "image/jpeg", "image/bmp"),
              anyText,
            ),
            bytes: fc.oneof(fc.integer({ min: -5, max: 30_000_000 }), fc.double(), fc.jsonValue({ maxDepth: 1 })),
            extra: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: [] },
        )
        .map((b) => JSON.stringify(b)),
      fc.string({ unit: "binary", maxLength: 100 }),
      fc.constantFrom("", "{", "null", "[]"),
    );
    // Half the requests are well-formed creates on the caller's own session with only the name drawn
    // from anything: the schema, not the session check, must refuse what cannot be stored.
    const ownCreate = fc.record({
      route: fc.constant(["POST", "/api/sessions/{own}/files"]),
      text: fc
        .record({ name: anyText, media_type: fc.constant("text/csv"), bytes: fc.constant(8) })
        .map((b) => JSON.stringify(b)),
      user: fc.constant("ann"),
    });
    const route = fc.oneof(
      fc
        .tuple(
          fc.constantFrom("GET", "POST"),
          pathId(() => sessions),
        )
        .map(([m, s]) => [m, `/api/sessions/${s}/files`]),
      fc
        .tuple(
          fc.constantFrom("POST"),
          pathId(() => sessions),
          pathId(() => files),
        )
        .map(([m, s, f]) => [m, `/api/sessions/${s}/files/${f}/complete`]),
      fc
        .tuple(
          fc.constantFrom("DELETE"),
          pathId(() => sessions),
          pathId(() => files),
        )
        .map(([m, s, f]) => [m, `/api/sessions/${s}/files/${f}`]),
      fc
        .tuple(
          fc.constantFrom("GET"),
          pathId(() => files),
        )
        .map(([m, f]) => [m, `/api/files/${f}`]),
    );
    const requestArb = fc.oneof(
      ownCreate,
      fc.record({ route, text: body, user: fc.constantFrom(...users, "", "u".repeat(129)) }),
    );
    await fc.assert(
      fc.asyncProperty(
        requestArb,
        fc.option(fc.nat({ max: 60 }), { freq: 4 }),
        async ({ route: [method, routePath], text, user }, abortAfter) => {
          const path = routePath!.replace("{own}", sessions[0]!);
          const payload = method === "POST" ? Buffer.from(text) : undefined;
          const headers: Record<string, string> = { "content-type": "application/json", "x-user-id": user };
          const reply = await send(method!, path!, headers, payload, abortAfter ?? undefined);
          check(reply, method!, path!);
          if (reply?.status !== 201) return;
          expect(isStorableText(JSON.parse(text).name), text).toBe(true);
          // Made room again, so the session's file limit does not end the fuzz's creates.
          const fileId = JSON.parse(reply.text).file_id as string;
          expect((await send("DELETE", `${path}/${fileId}`, { "x-user-id": user }, undefined))?.status).toBe(204);
        },
      ),
      { numRuns: 400, seed: SEED },
    );
    expect((await send("GET", "/health", {}, undefined))!.status).toBe(200);
    expect(unhandled.splice(0)).toEqual([]);
  }, 240_000);

  it("the local-only routes: the buckets, the Intercom stand-in and the playground, bodies cut off included", async () => {
    // A real upload URL, so the fuzz reaches past the signature check too.
    const grant = (
      await json("POST", `/api/sessions/${sessions[0]}/files`, "ann", {
        name: "g.csv",
        media_type: "text/csv",
        bytes: 64,
      })
    ).body as { upload_url: string };
    const signed = new URL(grant.upload_url);
    const signedPath = `${signed.pathname}${signed.search}`;
    const localPath = fc.oneof(
      fc.constant(signedPath),
      fc.constant(signedPath.replace(/signature=../, "signature=00")),
      fc
        .tuple(
          fc.constantFrom("/_local/files/", "/_local/documents/"),
          fc.oneof(
            fc.string({ maxLength: 40 }).map(encodeURIComponent),
            fc.constantFrom("%", "%zz", "a%E0%A4%A", "..%2F..%2Fetc", "%00", "users/%ED%A0%80/x", "x".repeat(300)),
          ),
          fc.constantFrom("", "?expires=1&signature=00", "?expires=99999999999&signature=zz&length=-1&type=a"),
        )
        .map(([prefix, key, query]) => `${prefix}${key}${query}`),
      fc.constantFrom(
        "/_local/intercom/customer",
        "/_local/intercom/conversations",
        "/_local/intercom/actions",
        "/_local/intercom/api/conversations/%zz",
        "/_local/intercom/api/conversations/1000/reply",
        "/_local/intercom/api/conversations/1000/parts",
        "/_local/intercom/api/contacts/%E0%A4%A",
        "/_local/intercom/conversations/1000/run",
        "/_local/intercom/conversations/%zz/run",
        "/_local/intercom/conversations/abc/run",
        "/config.json",
        "/assets/%zz",
        "/assets/..%2F..%2Fpackage.json",
        "/assets/x.js",
      ),
    );
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc
        .record({ email: anyText, body: anyText, message_type: anyText, admin_id: anyText }, { requiredKeys: [] })
        .map((b) => Buffer.from(JSON.stringify(b))),
      fc.constant(Buffer.alloc(64, 0x61)),
      fc.constantFrom("", "{", "null", "[1]").map((s) => Buffer.from(s)),
    );
    const headers = fc.record(
      {
        "content-type": fc.constantFrom("text/csv", "application/json", "image/png", "text/plain"),
        "if-none-match": fc.constantFrom("*", "x"),
        "x-user-id": fc.constantFrom("ann", "bob"),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "PUT", "POST", "DELETE", "HEAD"),
        localPath,
        headers,
        body,
        fc.option(fc.nat({ max: 100 }), { freq: 3 }),
        async (method, path, h, payload, abortAfter) => {
          const withBody = method === "PUT" || method === "POST";
          const reply = await send(method, path, h, withBody ? payload : undefined, abortAfter ?? undefined);
          check(reply, method, path);
        },
      ),
      { numRuns: 500, seed: SEED },
    );
    expect((await send("GET", "/health", {}, undefined))!.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(unhandled.splice(0)).toEqual([]);
  }, 240_000);
});
