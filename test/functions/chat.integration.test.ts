import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { createChatHandler } from "../../functions/chat";
import { buildChatRuntime, type ChatRuntime } from "../../graph/chat/runtime";
import { createCheckpointTable } from "../../graph/checkpoint";
import { loadConfig } from "../../shared/config";
import type { AgentStore } from "../../shared/stores/agent-store";
import { chatEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
const runtimes: Record<string, ChatRuntime> = {};

beforeAll(async () => {
  harness = await backendsHarness();
  for (const mode of ["local", "authorizer"] as const) {
    const config = loadConfig({ AUTH_MODE: mode, CHECKPOINT_TABLE: `chat-${mode}` });
    await createCheckpointTable(harness.dynamo.client, config.CHECKPOINT_TABLE);
    runtimes[mode] = await buildChatRuntime({
      config,
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
    });
  }
}, 60_000);
afterAll(() => harness.close());

const local = () => createChatHandler(runtimes.local!.config, async () => runtimes.local!);
const authorized = () => createChatHandler(runtimes.authorizer!.config, async () => runtimes.authorizer!);
const call = async (handler: ReturnType<typeof local>, event: ReturnType<typeof chatEvent>) => {
  const res = (await handler(event, context()))!;
  return { status: res.statusCode, body: JSON.parse(res.body) };
};

async function storedCounts() {
  const items = await harness.dynamo.client.send(new ScanCommand({ TableName: "chat-local", Select: "COUNT" }));
  const { rows } = await harness.postgres.query<{ n: number }>("select count(*)::int as n from agent_conversations");
  return { checkpointItems: items.Count, conversations: rows[0]!.n };
}

describe("POST /api/chat validation", () => {
  const cases: [string, ReturnType<typeof chatEvent>, string, RegExp][] = [
    ["invalid JSON", chatEvent("{not json"), "invalid_json", /not valid JSON/],
    ["an empty body", chatEvent(""), "invalid_json", /JSON object/],
    ["a JSON array", chatEvent([1, 2]), "invalid_json", /JSON object/],
    ["a missing message", chatEvent({ session_id: undefined }), "invalid_message", /^message: /],
    ["an empty message", chatEvent({ message: "   " }), "invalid_message", /must not be empty/],
    ["a message of the wrong type", chatEvent({ message: 42 }), "invalid_message", /must be a string/],
    ["a message over 16 KB", chatEvent({ message: "é".repeat(8193) }), "message_too_large", /at most 16384 bytes/],
    [
      "a message over 16 K characters",
      chatEvent({ message: "a".repeat(16385) }),
      "message_too_large",
      /at most 16384 bytes/,
    ],
    [
      "a session_id that is not a UUID",
      chatEvent({ message: "hi", session_id: "abc" }),
      "invalid_session_id",
      /^session_id: /,
    ],
    [
      "a session_id of the wrong type",
      chatEvent({ message: "hi", session_id: 7 }),
      "invalid_session_id",
      /^session_id: /,
    ],
    ["a user_id of the wrong type", chatEvent({ message: "hi", user_id: ["x"] }), "invalid_user_id", /^user_id: /],
    [
      "a project_id of the wrong type",
      chatEvent({ message: "hi", project_id: {} }),
      "invalid_project_id",
      /^project_id: /,
    ],
  ];

  it.each(cases)("answers %s with a 400 naming the problem, writing nothing", async (_name, event, code, message) => {
    const before = await storedCounts();
    const { status, body } = await call(local(), event);
    expect(status).toBe(400);
    expect(body.error.code).toBe(code);
    expect(body.error.message).toMatch(message);
    expect(await storedCounts()).toEqual(before);
  });

  it("refuses a body over the byte cap with 413 before parsing it", async () => {
    // The message's cap (6 x 16 KB + 4 KB) plus 1 MB of inline images as base64.
    const cap = 102_400 + Math.ceil((1024 * 1024 * 4) / 3);
    const { status, body } = await call(local(), chatEvent(`{"message":"hi","pad":"${"x".repeat(cap)}"}`));
    expect(status).toBe(413);
    expect(body.error).toEqual({ code: "body_too_large", message: `request body must be at most ${cap} bytes` });
  });

  it("answers bad input before asking for the runtime, so a cold container does not load the agent for it", async () => {
    let asked = 0;
    const handler = createChatHandler(runtimes.local!.config, async () => {
      asked++;
      return runtimes.local!;
    });
    expect((await call(handler, chatEvent("{not json"))).status).toBe(400);
    expect(asked).toBe(0);
    expect((await call(handler, chatEvent({ message: "hi" }))).status).toBe(200);
    expect(asked).toBe(1);
  });

  it("decodes a base64-encoded body as API Gateway may send it", async () => {
    const event = chatEvent(Buffer.from(JSON.stringify({ message: "hi" })).toString("base64"), {
      isBase64Encoded: true,
    });
    const { status, body } = await call(local(), event);
    expect(status).toBe(200);
    expect(body.reply).toBe("Hello! How can I help you today?");
  });
});

describe("POST /api/chat stand-in disclosure", () => {
  it("says in a header that the offline stand-in wrote the reply, and says nothing when Bedrock does", async () => {
    const res = (await local()(chatEvent({ message: "hi" }), context()))!;
    expect(res.statusCode).toBe(200);
    expect(res.headers?.["x-agent-stand-in"]).toMatch(/offline rule-based model/);
    const bedrock = createChatHandler(
      { ...runtimes.local!.config, BEDROCK_MODEL_ID: "us.anthropic.x-v1:0" },
      async () => runtimes.local!,
    );
    const withModel = (await bedrock(chatEvent({ message: "hi" }), context()))!;
    expect(withModel.headers?.["x-agent-stand-in"]).toBeUndefined();
  });
});

describe("POST /api/chat sessions and identity", () => {
  it("starts a session, continues it, and hides it from other users", async () => {
    const first = await call(local(), chatEvent({ message: "hi", user_id: "alice" }));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      reply: expect.any(String),
      session_id: expect.any(String),
      message_id: expect.any(String),
    });
    const second = await call(
      local(),
      chatEvent({ message: "and again", user_id: "alice", session_id: first.body.session_id }),
    );
    expect(second.body.session_id).toBe(first.body.session_id);
    const stranger = await call(
      local(),
      chatEvent({ message: "hi", session_id: first.body.session_id }, { headers: { "x-user-id": "bob" } }),
    );
    expect(stranger).toEqual({
      status: 404,
      body: { error: { code: "session_not_found", message: "no such session" } },
    });
  });

  it("takes the user from the authorizer in AWS and refuses a different body user_id", async () => {
    const claims = { claims: { sub: "user-123" } };
    const ok = await call(authorized(), chatEvent({ message: "hi" }, { authorizer: claims }));
    expect(ok.status).toBe(200);
    const saved = await harness.conversations.get(ok.body.session_id);
    expect(saved?.userId).toBe("user-123");

    const mismatch = await call(
      authorized(),
      chatEvent({ message: "hi", user_id: "someone-else" }, { authorizer: claims }),
    );
    expect(mismatch).toMatchObject({ status: 403, body: { error: { code: "forbidden" } } });
    const headerIgnored = await call(
      authorized(),
      chatEvent({ message: "hi" }, { headers: { "x-user-id": "spoofed" } }),
    );
    expect(headerIgnored).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
  });
});

describe("POST /api/chat with the memory store down", () => {
  it("still answers 200, and the tool result says memory is unavailable", async () => {
    const failing = new Proxy({} as AgentStore, {
      get: () => async () => {
        throw new Error("Supabase is down");
      },
    });
    const config = loadConfig({ AUTH_MODE: "local", CHECKPOINT_TABLE: "chat-local" });
    const runtime = await buildChatRuntime({
      config,
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
      store: failing,
    });
    const res = await call(
      createChatHandler(runtime.config, async () => runtime),
      chatEvent({ message: "what is my favourite colour?", user_id: "u1" }),
    );
    expect(res.status).toBe(200);
    expect(res.body.reply).toMatch(/Memory is unavailable right now/);
  });
});
