import { createSessionsHandler } from "../../functions/sessions";
import { loadConfig } from "../../shared/config";
import type { SessionOwners } from "../../shared/stores/session-owners";
import { apiEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
let owners: SessionOwners;
let config: ReturnType<typeof loadConfig>;
beforeAll(async () => {
  harness = await backendsHarness();
  const state = await harness.stateTables();
  owners = state.owners;
  config = loadConfig({ AUTH_MODE: "local", CHECKPOINT_TABLE: state.tableName });
}, 60_000);
afterAll(() => harness.close());

const SESSION = "0b3c2a8e-5f0e-4c8e-9a51-3f2d7c1b9e10";
const history = (id: string, user = "alice") =>
  createSessionsHandler(() => ({
    config,
    dynamo: harness.dynamo.client,
    conversations: harness.conversations,
  }))(
    apiEvent({
      method: "GET",
      resource: "/api/sessions/{id}/messages",
      path: `/api/sessions/${id}/messages`,
      pathParameters: { id },
      headers: { "x-user-id": user },
    }),
    context(),
  );

describe("GET /api/sessions/{id}/messages", () => {
  it("returns the answers-only history in order", async () => {
    await owners.claim(SESSION, "alice");
    await harness.conversations.recordTurn({
      sessionId: SESSION,
      userId: "alice",
      projectId: null,
      sessionName: "hi",
      turnId: "a1",
      messages: [
        { role: "user", content: "hi", created_at: "2026-01-01T00:00:00.000Z", message_id: "h1" },
        { role: "assistant", content: "hello", created_at: "2026-01-01T00:00:01.000Z", message_id: "a1" },
      ],
      trace: null,
    });
    const res = (await history(SESSION))!;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual([
      { role: "user", content: "hi", created_at: "2026-01-01T00:00:00.000Z" },
      { role: "assistant", content: "hello", created_at: "2026-01-01T00:00:01.000Z" },
    ]);
  });

  it("is 404 for another user's session and for an unknown one, 400 for a malformed id", async () => {
    expect((await history(SESSION, "bob"))!.statusCode).toBe(404);
    expect((await history("6f9619ff-8b86-4011-b42d-00cf4fc964ff"))!.statusCode).toBe(404);
    const bad = (await history("not-a-uuid"))!;
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe("invalid_session_id");
  });
});

describe("GET /api/sessions/{id}", () => {
  const SETTINGS_SESSION = "4d1c2a8e-5f0e-4c8e-9a51-3f2d7c1b9e11";
  const call = (method: "GET" | "PATCH", id: string, user = "alice", body?: unknown) =>
    createSessionsHandler(() => ({ config, dynamo: harness.dynamo.client, conversations: harness.conversations }))(
      apiEvent({
        method,
        resource: "/api/sessions/{id}",
        path: `/api/sessions/${id}`,
        pathParameters: { id },
        headers: { "x-user-id": user },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      context(),
    );

  it("reads the settings and approvals the PATCH route set, the same JSON it answered", async () => {
    await owners.claim(SETTINGS_SESSION, "alice");
    const fresh = (await call("GET", SETTINGS_SESSION))!;
    expect(fresh.statusCode).toBe(200);
    expect(JSON.parse(fresh.body)).toMatchObject({ session_id: SETTINGS_SESSION, private: false, approve_tools: [] });

    const patched = (await call("PATCH", SETTINGS_SESSION, "alice", {
      settings: { private: true },
      approve_tools: "*",
    }))!;
    expect(patched.statusCode).toBe(200);
    const read = (await call("GET", SETTINGS_SESSION))!;
    expect(JSON.parse(read.body)).toEqual(JSON.parse(patched.body));
    expect(JSON.parse(read.body)).toMatchObject({ private: true, settings: { private: true }, approve_tools: "*" });

    // A settings-only PATCH keeps (and answers) the approvals already set.
    const again = (await call("PATCH", SETTINGS_SESSION, "alice", { settings: { memory: false } }))!;
    expect(JSON.parse(again.body)).toMatchObject({ approve_tools: "*", settings: { memory: false, private: true } });
  });

  it("is 404 for another user's session and an unknown one, 400 for a malformed id, and reads nothing of them", async () => {
    const foreign = (await call("GET", SETTINGS_SESSION, "bob"))!;
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).not.toContain("approve_tools");
    expect((await call("GET", "6f9619ff-8b86-4011-b42d-00cf4fc964ff"))!.statusCode).toBe(404);
    const bad = (await call("GET", "not-a-uuid"))!;
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe("invalid_session_id");
  });
});
