import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createSessionsHandler } from "../../../functions/sessions";
import { buildChatGraph } from "../../../graph/chat/graph";
import { firstWords, nameSession } from "../../../graph/chat/naming";
import { ChatService, MIN_RUN_MS } from "../../../graph/chat/service";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { buildChatRuntime } from "../../../graph/chat/runtime";
import { loadConfig } from "../../../shared/config";
import { AppError, sessionNotFound } from "../../../shared/errors";
import { deleteSession } from "../../../graph/chat/session-deletion";
import { ThreadService } from "../../../graph/agent-server/threads";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { ownedSession } from "../../../shared/ownership";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { apiEvent, context } from "../../support/events";
import { failingModel, ScriptedModel } from "../../support/models";
import { backendsHarness } from "../../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

/** A model that takes its time, so two requests overlap. */
const slowModel = () =>
  new ScriptedModel(() => new AIMessage("done")) as ScriptedModel & { _generate: ScriptedModel["_generate"] };

async function service({
  modelMs = 150,
  leaseMs,
  queueWaitMs = 5000,
}: { modelMs?: number; leaseMs?: number; queueWaitMs?: number } = {}) {
  const tables = await harness.stateTables();
  const { checkpointer, tableName } = tables;
  const owners =
    leaseMs === undefined ? tables.owners : new SessionOwners(harness.dynamo.client, tableName, undefined, leaseMs);
  const model = slowModel();
  const original = model._generate.bind(model);
  model._generate = async (...args) => {
    await new Promise((r) => setTimeout(r, modelMs));
    return original(...args);
  };
  const chat = new ChatService({
    graph: buildChatGraph({ model, tools: [], checkpointer }),
    owners,
    conversations: harness.conversations,
    recursionLimit: 6,
    queueWaitMs,
  });
  return { chat, checkpointer, tableName };
}

/** The chat runtime as the functions build it, on a table of its own, with the harness's stores. */
async function productionRuntime() {
  const { tableName } = await harness.stateTables();
  const config = loadConfig({ AUTH_MODE: "local", CHECKPOINT_TABLE: tableName });
  const runtime = await buildChatRuntime({
    config,
    dynamo: harness.dynamo.client,
    conversations: harness.conversations,
    store: harness.store,
  });
  return { tableName, config, runtime };
}

/** DELETE /api/sessions/{id} as `user`, through the sessions function's handler. */
const deleteThroughRoute = (handler: ReturnType<typeof createSessionsHandler>, sessionId: string, user: string) =>
  handler(
    apiEvent({
      method: "DELETE",
      resource: "/api/sessions/{id}",
      path: `/api/sessions/${sessionId}`,
      pathParameters: { id: sessionId },
      headers: { "x-user-id": user },
    }),
    context(),
  );

const humans = (messages: BaseMessage[]) => messages.filter((m) => m.getType() === "human").map((m) => m.content);

describe("double-texting", () => {
  it("rejects the second of two simultaneous messages with 409 and keeps the first once", async () => {
    const { chat, checkpointer } = await service();
    const { sessionId } = await chat.reply({ userId: "u", message: "start" });
    const results = await Promise.allSettled([
      chat.reply({ userId: "u", sessionId, message: "first" }),
      chat.reply({ userId: "u", sessionId, message: "second" }),
    ]);
    const rejected = results.filter((r) => r.status === "rejected");
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({ status: 409, code: "session_busy" });
    const state = await checkpointer.getTuple({ configurable: { thread_id: sessionId } });
    const accepted = results.findIndex((r) => r.status === "fulfilled") === 0 ? "first" : "second";
    expect(humans(state!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["start", accepted]);
  });

  it("with if_busy queue, runs both in order and keeps every message once", async () => {
    const { chat, checkpointer } = await service();
    const { sessionId } = await chat.reply({ userId: "u", message: "start" });
    const first = chat.reply({ userId: "u", sessionId, message: "first", ifBusy: "queue" });
    await new Promise((r) => setTimeout(r, 20));
    const second = chat.reply({ userId: "u", sessionId, message: "second", ifBusy: "queue" });
    await Promise.all([first, second]);
    const state = await checkpointer.getTuple({ configurable: { thread_id: sessionId } });
    expect(humans(state!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["start", "first", "second"]);
    expect((await harness.conversations.get(sessionId))!.messages.map((m) => m.content)).toEqual([
      "start",
      "done",
      "first",
      "done",
      "second",
      "done",
    ]);
  });

  // A probe's finding: an enqueued background run (and a cron's firing) waited at most
  // SESSION_QUEUE_WAIT_MS (20 s) for its thread, then ended in error and never ran, though its
  // worker had 15 minutes; a request answers within API Gateway's time, a worker need not.
  it("lets a run that may wait as long as its deadline allows (a background run) outwait the request's limit", async () => {
    const { chat } = await service({ modelMs: 800, queueWaitMs: 200 });
    const { sessionId } = await chat.reply({ userId: "u", message: "start" });
    const holder = chat.reply({ userId: "u", sessionId, message: "holder" });
    await new Promise((r) => setTimeout(r, 100));
    // A request's wait is its limit: 409 after 200 ms.
    await expect(chat.reply({ userId: "u", sessionId, message: "asked", ifBusy: "queue" })).rejects.toMatchObject({
      status: 409,
    });
    const deadline = Date.now() + MIN_RUN_MS + 30_000;
    const background = chat.reply({
      userId: "u",
      sessionId,
      message: "background",
      ifBusy: "queue",
      waitUntilDeadline: true,
      deadline,
    });
    await holder;
    await expect(background).resolves.toMatchObject({ sessionId });
  });

  it("keeps the lease for a run that outlives it (heartbeat): a message during it gets 409", async () => {
    const { chat, checkpointer } = await service({ modelMs: 1000, leaseMs: 300 });
    const { sessionId } = await chat.reply({ userId: "u", message: "start" });
    const long = chat.reply({ userId: "u", sessionId, message: "long" });
    await new Promise((r) => setTimeout(r, 700)); // more than twice the lease
    await expect(chat.reply({ userId: "u", sessionId, message: "during" })).rejects.toMatchObject({
      status: 409,
      code: "session_busy",
    });
    await expect(long).resolves.toMatchObject({ reply: "done" });
    const state = await checkpointer.getTuple({ configurable: { thread_id: sessionId } });
    expect(humans(state!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["start", "long"]);
  });

  it("stops a run at its deadline with 504, frees the session, and waits for a busy one only as long as the deadline allows", async () => {
    const { chat } = await service({ modelMs: 2000 });
    const { sessionId } = await chat.reply({ userId: "u", message: "start" });
    const started = Date.now();
    await expect(
      chat.reply({ userId: "u", sessionId, message: "slow", deadline: Date.now() + 200 }),
    ).rejects.toMatchObject({ status: 504, code: "turn_timeout" });
    expect(Date.now() - started).toBeLessThan(1500);
    // A queued message whose deadline leaves no room for a run does not wait.
    const holder = chat.reply({ userId: "u", sessionId, message: "holder" });
    await new Promise((r) => setTimeout(r, 100));
    await expect(
      chat.reply({ userId: "u", sessionId, message: "queued", ifBusy: "queue", deadline: Date.now() + 5_000 }),
    ).rejects.toMatchObject({ status: 409 });
    await holder;
  });

  it("frees the session after a failed run", async () => {
    const { checkpointer, owners } = await harness.stateTables();
    const broken = new ChatService({
      graph: buildChatGraph({ model: failingModel("ValidationException"), tools: [], checkpointer }),
      owners,
      recursionLimit: 6,
    });
    await expect(broken.reply({ userId: "u", message: "x" })).rejects.toBeInstanceOf(AppError);
    const { sessionId } = await new ChatService({
      graph: buildChatGraph({ model: new ScriptedModel(() => new AIMessage("ok")), tools: [], checkpointer }),
      owners,
      recursionLimit: 6,
    }).reply({ userId: "u", message: "again" });
    const { lease } = await owners.lease(sessionId, "u");
    expect(lease).toBeDefined();
    await lease!.release();
  });
});

describe("session names", () => {
  it("asks the model for a short name and falls back to the first five words", async () => {
    expect(await nameSession(new OfflineChatModel({}), "Planning our team offsite in Lisbon next spring")).toBe(
      "Planning our team offsite in",
    );
    expect(await nameSession(failingModel("ThrottlingException"), "Why is my invoice higher this month?")).toBe(
      "Why is my invoice higher",
    );
    expect(firstWords("   ")).toBe("New chat");
  });
});

describe("deleting a session", () => {
  it("leaves no checkpoint items, conversation, traces or session row", async () => {
    const { tableName, config, runtime } = await productionRuntime();
    const { sessionId } = await runtime.chat.reply({ userId: "del", message: "what is my favourite colour?" });
    await runtime.chat.reply({ userId: "del", sessionId, message: "remember that I like tea" });
    const counts = async () => {
      const items = await harness.dynamo.client.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: "pk = :s",
          ExpressionAttributeValues: { ":s": { S: sessionId } },
        }),
      );
      const sql = async (table: string) =>
        (
          await harness.postgres.query<{ n: number }>(`select count(*)::int as n from ${table} where session_id = $1`, [
            sessionId,
          ])
        ).rows[0]!.n;
      return {
        dynamo: items.Count,
        conversations: await sql("agent_conversations"),
        traces: await sql("execution_traces"),
        sessions: await sql("agent_sessions"),
      };
    };
    const before = await counts();
    expect(before.dynamo).toBeGreaterThan(5);
    expect(before).toMatchObject({ conversations: 1, traces: 2, sessions: 1 });

    const handler = createSessionsHandler(() => ({
      config,
      dynamo: harness.dynamo.client,
      conversations: harness.conversations,
    }));
    const del = (user: string) => deleteThroughRoute(handler, sessionId, user);
    expect((await del("someone-else"))!.statusCode).toBe(404);
    expect((await del("del"))!.statusCode).toBe(204);
    expect(await counts()).toEqual({ dynamo: 0, conversations: 0, traces: 0, sessions: 0 });
    expect((await del("del"))!.statusCode).toBe(404);
  });

  it("half-done (a store failed part-way) leaves a session that takes no turn and shows nothing, until a retry finishes it", async () => {
    const { tableName, config, runtime } = await productionRuntime();
    const checkpointer = new DynamoDBSaver({ client: harness.dynamo.client, tableName });
    const { sessionId } = await runtime.chat.reply({ userId: "half", message: "my secret is 1234" });
    const backends = { config, dynamo: harness.dynamo.client, conversations: harness.conversations };
    const errors = { notFound: sessionNotFound, busy: () => new AppError(409, "session_busy", "busy") };
    const failing = {
      deleteThread: async () => {
        throw Object.assign(new Error("Throughput exceeds the current capacity"), { name: "ThrottlingException" });
      },
    };
    await expect(deleteSession(backends, "half", sessionId, errors, failing)).rejects.toThrow(/capacity/);
    // The transcript went first; the graph state is still there, but nothing may use it.
    expect((await checkpointer.getTuple({ configurable: { thread_id: sessionId } }))?.checkpoint).toBeDefined();
    await expect(
      runtime.chat.reply({ userId: "half", sessionId, message: "what is my secret?" }),
    ).rejects.toMatchObject({ status: 404, code: "session_not_found" });
    await expect(
      ownedSession(new SessionOwners(harness.dynamo.client, tableName), "half", sessionId),
    ).rejects.toMatchObject({
      status: 404,
    });
    // The user's retry, through the route, finishes the deletion; anyone else's still finds nothing.
    const handler = createSessionsHandler(() => backends);
    const del = (user: string) => deleteThroughRoute(handler, sessionId, user);
    expect((await del("someone-else"))!.statusCode).toBe(404);
    expect((await del("half"))!.statusCode).toBe(204);
    expect(await checkpointer.getTuple({ configurable: { thread_id: sessionId } })).toBeUndefined();
    expect((await del("half"))!.statusCode).toBe(404);
  });
});

describe("a turn whose process died between its two writes", () => {
  /** A session with one recorded turn, then a turn that wrote the graph state and died before the transcript (or after, `recorded`). */
  async function crashedTurn(
    user: string,
    recorded: boolean,
    /** what happens between the crash and the next turn that succeeds */
    meanwhile: (
      chat: ChatService,
      sessionId: string,
      tableName: string,
      runtime: Awaited<ReturnType<typeof buildChatRuntime>>,
    ) => Promise<void> = async () => {},
  ) {
    const { tableName, runtime } = await productionRuntime();
    const { sessionId } = await runtime.chat.reply({ userId: user, message: "hello there" });
    // The dying turn: its lease (a long one, so no heartbeat runs), its messages in the state...
    const owners = new SessionOwners(harness.dynamo.client, tableName, undefined, 3_600_000);
    const { lease } = await owners.lease(sessionId, user, { turn: { messageId: "dying-human" } });
    expect(lease).toBeDefined();
    const config2 = { configurable: { thread_id: sessionId } };
    await runtime.graph.updateState(
      config2,
      {
        messages: [
          new HumanMessage({ id: "dying-human", content: "my pin is 9999" }),
          new AIMessage({ id: "dying-ai", content: "Noted." }),
        ],
      },
      "agent",
    );
    if (recorded)
      await harness.conversations.recordTurn({
        sessionId,
        userId: user,
        projectId: null,
        sessionName: "hello there",
        turnId: "dying-ai",
        messages: [
          { role: "user", content: "my pin is 9999", created_at: new Date().toISOString(), message_id: "dying-human" },
          { role: "assistant", content: "Noted.", created_at: new Date().toISOString(), message_id: "dying-ai" },
        ],
        trace: [],
      });
    // ...and no release: the process is gone, and its lease runs out.
    await DynamoDBDocumentClient.from(harness.dynamo.client).send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: sessionId, sk: "session" },
        UpdateExpression: "SET lease_until = :past",
        ExpressionAttributeValues: { ":past": Date.now() - 1 },
      }),
    );
    await meanwhile(runtime.chat, sessionId, tableName, runtime);
    await runtime.chat.reply({ userId: user, sessionId, message: "what did I tell you?" });
    const state = await runtime.graph.getState(config2);
    const ids = ((state.values as { messages: BaseMessage[] }).messages ?? []).map((m) => m.id);
    const transcript = (await harness.conversations.get(sessionId))!.messages.map((m) => m.content);
    // The turn that let go cleanly took its own mark with its lease: the next turn reads no transcript.
    const owner = await DynamoDBDocumentClient.from(harness.dynamo.client).send(
      new GetCommand({ TableName: tableName, Key: { pk: sessionId, sk: "session" }, ConsistentRead: true }),
    );
    expect(owner.Item).not.toHaveProperty("lease_message");
    expect(owner.Item).not.toHaveProperty("lease_until");
    return { ids, transcript };
  }

  it("is taken out of the graph state by the next turn when the transcript never got it", async () => {
    const { ids, transcript } = await crashedTurn("died-early", false);
    expect(ids).not.toContain("dying-human");
    expect(ids).not.toContain("dying-ai");
    expect(transcript).not.toContain("my pin is 9999");
    expect(transcript).toContain("what did I tell you?");
  });

  it("is taken out even when the first request after it is refused (another project): the refusal repairs first", async () => {
    const { ids } = await crashedTurn("died-then-refused", false, async (chat, sessionId) => {
      await expect(
        chat.reply({ userId: "died-then-refused", sessionId, projectId: "elsewhere", message: "hi" }),
      ).rejects.toMatchObject({ status: 409, code: "project_mismatch" });
    });
    expect(ids).not.toContain("dying-human");
  });

  it("refuses the turn (503) and keeps the mark for the next one when the transcript cannot be read", async () => {
    const { ids } = await crashedTurn("died-then-outage", false, async (chat, sessionId, tableName) => {
      const get = vi.spyOn(harness.conversations, "get").mockRejectedValueOnce(new Error("PGRST002: no schema cache"));
      try {
        await expect(chat.reply({ userId: "died-then-outage", sessionId, message: "hi" })).rejects.toMatchObject({
          status: 503,
          code: "store_unavailable",
        });
      } finally {
        get.mockRestore();
      }
      const owner = await DynamoDBDocumentClient.from(harness.dynamo.client).send(
        new GetCommand({ TableName: tableName, Key: { pk: sessionId, sk: "session" }, ConsistentRead: true }),
      );
      expect(owner.Item).toMatchObject({ lease_message: "dying-human" });
      expect(owner.Item).not.toHaveProperty("lease_until");
    });
    expect(ids).not.toContain("dying-human");
  });

  it("is taken out before a client's state write lands on it, so the write survives the repair", async () => {
    let written: string[] = [];
    const { ids } = await crashedTurn("died-then-state-write", false, async (_chat, sessionId, _table, runtime) => {
      const threads = new ThreadService(runtime, runtime.graph);
      await threads.updateState("died-then-state-write", sessionId, {
        values: { messages: [{ type: "human", id: "client-edit", content: "a note the client wrote" }] },
        asNode: "agent",
      });
      const state = await runtime.graph.getState({ configurable: { thread_id: sessionId } });
      written = ((state.values as { messages: BaseMessage[] }).messages ?? []).map((m) => m.id!);
    });
    expect(written).toContain("client-edit");
    expect(written).not.toContain("dying-human");
    expect(ids).toContain("client-edit");
    expect(ids).not.toContain("dying-human");
  });

  it("stays when the transcript has it (the process died after both writes)", async () => {
    const { ids, transcript } = await crashedTurn("died-late", true);
    expect(ids).toEqual(expect.arrayContaining(["dying-human", "dying-ai"]));
    expect(transcript).toContain("my pin is 9999");
  });
});

describe("a turn that loses its lease mid-run", () => {
  it("records nothing, keeps its mark, and the next holder takes it out of the state", async () => {
    const { chat, checkpointer, tableName } = await service({ modelMs: 600, leaseMs: 300 });
    const { sessionId } = await chat.reply({ userId: "lost", message: "start" });
    const doc = DynamoDBDocumentClient.from(harness.dynamo.client);
    const key = { pk: sessionId, sk: "session" };
    // Another process takes the session over while the model answers (as after a long pause of this one).
    const turn = chat.reply({ userId: "lost", sessionId, message: "my pin is 9999", messageId: "lost-human" });
    await new Promise((r) => setTimeout(r, 200));
    await doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: "SET lease_token = :t, lease_until = :u",
        ExpressionAttributeValues: { ":t": "other", ":u": Date.now() + 60_000 },
      }),
    );
    await expect(turn).rejects.toMatchObject({ status: 409, code: "session_busy" });
    const transcript = (await harness.conversations.get(sessionId))!.messages.map((m) => m.content);
    expect(transcript).not.toContain("my pin is 9999");
    expect(
      (await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item,
    ).toMatchObject({
      lease_message: "lost-human",
    });
    // The other holder is gone; the next turn finds the mark and takes the lost turn out.
    await doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: "SET lease_until = :past",
        ExpressionAttributeValues: { ":past": Date.now() - 1 },
      }),
    );
    await chat.reply({ userId: "lost", sessionId, message: "again" });
    const state = await checkpointer.getTuple({ configurable: { thread_id: sessionId } });
    const ids = (state!.checkpoint.channel_values.messages as BaseMessage[]).map((m) => m.id);
    expect(ids).not.toContain("lost-human");
    expect(humans(state!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["start", "again"]);
  }, 20_000);
});

describe("a turn whose lease could not be renewed (the table did not answer for a whole lease)", () => {
  it("answers 503, keeps its mark though it lets the lease go, and the next turn takes it out of the state", async () => {
    const { checkpointer, tableName } = await harness.stateTables();
    // The lease's own client, whose renewals fail while `down` (its release does not); the graph state's stays healthy.
    const client = new DynamoDBClient({
      endpoint: harness.dynamo.endpoint,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      maxAttempts: 1,
    });
    let down = false;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { UpdateExpression?: string };
        if (down && context.commandName === "UpdateItemCommand" && input.UpdateExpression?.startsWith("SET #r0"))
          throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        return next(args);
      },
      { step: "initialize" },
    );
    const model = slowModel();
    const original = model._generate.bind(model);
    model._generate = async (...args) => {
      await new Promise((r) => setTimeout(r, 700));
      return original(...args);
    };
    const chat = new ChatService({
      graph: buildChatGraph({ model, tools: [], checkpointer }),
      owners: new SessionOwners(client, tableName, undefined, 300),
      conversations: harness.conversations,
      recursionLimit: 6,
    });
    const fast = new ChatService({
      graph: buildChatGraph({ model: slowModel(), tools: [], checkpointer }),
      owners: new SessionOwners(harness.dynamo.client, tableName),
      conversations: harness.conversations,
      recursionLimit: 6,
    });
    const { sessionId } = await fast.reply({ userId: "unrenewed", message: "start" });
    const turn = chat.reply({
      userId: "unrenewed",
      sessionId,
      message: "my pin is 9999",
      messageId: "unrenewed-human",
    });
    await new Promise((r) => setTimeout(r, 100));
    down = true;
    await expect(turn).rejects.toMatchObject({ status: 503, code: "state_unavailable" });
    const owner = await DynamoDBDocumentClient.from(harness.dynamo.client).send(
      new GetCommand({ TableName: tableName, Key: { pk: sessionId, sk: "session" }, ConsistentRead: true }),
    );
    expect(owner.Item).toMatchObject({ lease_message: "unrenewed-human" });
    await fast.reply({ userId: "unrenewed", sessionId, message: "again" });
    const state = await checkpointer.getTuple({ configurable: { thread_id: sessionId } });
    expect(humans(state!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["start", "again"]);
    const transcript = (await harness.conversations.get(sessionId))!.messages.map((m) => m.content);
    expect(transcript).not.toContain("my pin is 9999");
    client.destroy();
  }, 20_000);
});
