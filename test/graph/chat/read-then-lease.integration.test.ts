import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService } from "../../../graph/chat/service";
import { AppError } from "../../../shared/errors";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import type { SessionOwners } from "../../../shared/stores/session-owners";
import { UserUsage } from "../../../shared/stores/user-usage";
import { meter, type Meter } from "../../support/dynamo-meter";
import { backendsHarness } from "../../support/stack";

// A turn reads its session's owner record with the latest checkpoint (one Query), then takes the
// lease on condition that nobody took it since (the record's lease generation), and the graph
// starts from what was read. Adversarial cases: a foreign or busy session (nothing decoded, nothing
// written), a turn that ran between the read and the lease (read again, never run on a stale
// state), a quota refusal in the lease's own transaction (nothing written).

let harness: Awaited<ReturnType<typeof backendsHarness>>;
let m: Meter;
beforeAll(async () => {
  harness = await backendsHarness();
  m = meter(harness.dynamo.client);
}, 60_000);
afterAll(() => harness.close());

async function service(quotas?: ConstructorParameters<typeof UserUsage>[2]) {
  const { checkpointer, owners, tableName } = await harness.stateTables();
  const graph = buildChatGraph({ model: new OfflineChatModel(), tools: [], checkpointer });
  const usage = quotas && new UserUsage(harness.dynamo.client, tableName, quotas);
  const chat = new ChatService({
    graph,
    owners,
    conversations: harness.conversations,
    recursionLimit: 12,
    ...(usage ? { usage } : {}),
  });
  const messages = async (sessionId: string) =>
    ((await graph.getState({ configurable: { thread_id: sessionId } })).values.messages as BaseMessage[]).map(
      (message) => message.content,
    );
  const owner = async (sessionId: string) =>
    (
      await harness.dynamo.client.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: sessionId }, sk: { S: "session" } } }),
      )
    ).Item;
  return { chat, owners, messages, owner, tableName };
}

async function refusal(run: Promise<unknown>): Promise<AppError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe("a turn's read of its session, then its lease", () => {
  it("answers another user's session 404 in one Query, writing nothing and decoding none of its state", async () => {
    const { chat, owner } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "my secret plan" });
    const before = await owner(sessionId);
    m.reset();
    const err = await refusal(chat.reply({ userId: "mallory", sessionId, message: "show me" }));
    expect(err.status).toBe(404);
    expect(m.byCommand).toEqual({ QueryCommand: 1 });
    expect(await owner(sessionId)).toEqual(before);
  });

  it("answers a busy session 409 without taking anything, and a queued turn runs after it on its state", async () => {
    const { chat, owners, messages } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    const held = (await owners.lease(sessionId, "ann")).lease!;
    m.reset();
    const busy = await refusal(chat.reply({ userId: "ann", sessionId, message: "second" }));
    expect(busy.status).toBe(409);
    expect(m.byCommand).toEqual({ QueryCommand: 1 });
    const queued = chat.reply({ userId: "ann", sessionId, message: "third", ifBusy: "queue" });
    await new Promise((r) => setTimeout(r, 150));
    await held.release();
    await queued;
    expect(await messages(sessionId)).toEqual(["first", expect.any(String), "third", expect.any(String)]);
  });

  it("reads again when another turn ran between its read and its lease, and runs on that turn's state", async () => {
    const { chat, owners, messages } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    // Between this turn's read and its lease, another turn runs whole on the session.
    const leaseAfterRead = owners.leaseAfterRead.bind(owners);
    let raced = false;
    (owners as { leaseAfterRead: SessionOwners["leaseAfterRead"] }).leaseAfterRead = async (...args) => {
      if (!raced) {
        raced = true;
        await chat.reply({ userId: "ann", sessionId, message: "in between" });
      }
      return leaseAfterRead(...args);
    };
    await chat.reply({ userId: "ann", sessionId, message: "last" });
    expect(await messages(sessionId)).toEqual([
      "first",
      expect.any(String),
      "in between",
      expect.any(String),
      "last",
      expect.any(String),
    ]);
  });

  it("leaves no read of its own behind for a later read when it is refused after taking its lease", async () => {
    const { chat, messages, tableName } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    const err = await refusal(
      chat.run({ userId: "ann", sessionId, message: "branch", options: { checkpointId: "no-such-checkpoint" } }),
    );
    expect(err.status).toBe(404);
    // Another process writes the session's state; this process's next read sees it.
    const elsewhere = buildChatGraph({
      model: new OfflineChatModel(),
      tools: [],
      checkpointer: new DynamoDBSaver({ client: harness.dynamo.client, tableName }),
    });
    await elsewhere.invoke(
      { messages: [new HumanMessage("from elsewhere")] },
      { configurable: { thread_id: sessionId } },
    );
    expect(await messages(sessionId)).toContain("from elsewhere");
  });

  it("writes nothing when the quota refuses the turn in the lease's own transaction", async () => {
    const { chat, owner, messages } = await service({ turnsPerMinute: 1 });
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    const before = await owner(sessionId);
    const err = await refusal(chat.reply({ userId: "ann", sessionId, message: "second" }));
    expect(err.status).toBe(429);
    expect(await owner(sessionId)).toEqual(before);
    expect(await messages(sessionId)).toHaveLength(2);
    // A new session's refused turn makes no session at all.
    expect((await refusal(chat.reply({ userId: "ann", message: "a new one" }))).status).toBe(429);
  });
});
