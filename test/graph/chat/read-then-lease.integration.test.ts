import { DeleteItemCommand, GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { randomUUID } from "node:crypto";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService } from "../../../graph/chat/service";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { SessionOwners, seenSession } from "../../../shared/stores/session-owners";
import { UserUsage } from "../../../shared/stores/user-usage";
import { refusal } from "../../support/refusal";
import { meteredBackends } from "../../support/metered-backends";

// A turn reads its session's owner record with the latest checkpoint (one Query), then takes the
// lease on condition that nobody took it since (the record's lease generation), and the graph
// starts from what was read. Adversarial cases: a foreign or busy session (nothing decoded, nothing
// written), a turn that ran between the read and the lease (read again, never run on a stale
// state), a quota refusal in the lease's own transaction (nothing written).

const stack = meteredBackends();

async function service(
  quotas?: ConstructorParameters<typeof UserUsage>[2],
  conversations = stack.harness.conversations,
) {
  const { checkpointer, owners, tableName } = await stack.harness.stateTables();
  const graph = buildChatGraph({ model: new OfflineChatModel(), tools: [], checkpointer });
  const usage = quotas && new UserUsage(stack.harness.dynamo.client, tableName, quotas);
  const chat = new ChatService({
    graph,
    owners,
    conversations,
    recursionLimit: 12,
    ...(usage ? { usage } : {}),
  });
  const messages = async (sessionId: string) =>
    ((await graph.getState({ configurable: { thread_id: sessionId } })).values.messages as BaseMessage[]).map(
      (message) => message.content,
    );
  const owner = async (sessionId: string) =>
    (
      await stack.harness.dynamo.client.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: sessionId }, sk: { S: "session" } } }),
      )
    ).Item;
  return { chat, owners, messages, owner, tableName, usage };
}

describe("a turn's read of its session, then its lease", () => {
  it("answers another user's session 404 in one Query, writing nothing and decoding none of its state", async () => {
    const { chat, owner } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "my secret plan" });
    const before = await owner(sessionId);
    stack.meter.reset();
    const err = await refusal(chat.reply({ userId: "mallory", sessionId, message: "show me" }));
    expect(err.status).toBe(404);
    expect(stack.meter.byCommand).toEqual({ QueryCommand: 1 });
    expect(await owner(sessionId)).toEqual(before);
  });

  it("answers a busy session 409 without taking anything, and a queued turn runs after it on its state", async () => {
    const { chat, owners, messages } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    const held = (await owners.lease(sessionId, "ann")).lease!;
    stack.meter.reset();
    const busy = await refusal(chat.reply({ userId: "ann", sessionId, message: "second" }));
    expect(busy.status).toBe(409);
    expect(stack.meter.byCommand).toEqual({ QueryCommand: 1 });
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
      checkpointer: new DynamoDBSaver({ client: stack.harness.dynamo.client, tableName }),
    });
    await elsewhere.invoke(
      { messages: [new HumanMessage("from elsewhere")] },
      { configurable: { thread_id: sessionId } },
    );
    expect(await messages(sessionId)).toContain("from elsewhere");
  });

  // A review's finding: the turn's checks (a client's message id, as Agent Server runs send) read
  // the state the turn had read, then the graph read it again from the store: 5 requests.
  it("reads its session once however many checks read the state before the graph: 4 requests under a quota", async () => {
    const { chat } = await service({ turnsPerMinute: 100, tokensPerDay: 1_000_000 });
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    stack.meter.reset();
    await chat.reply({ userId: "ann", sessionId, message: "second", messageId: randomUUID() });
    expect(stack.meter.byCommand).toEqual({ QueryCommand: 1, TransactWriteItemsCommand: 2, BatchWriteItemCommand: 1 });
  });

  // A review's finding: a record made again under the same id started its count where the first
  // one had, so a read of the first passed the second's lease condition.
  it("takes no lease on a read of a session that was deleted and made again under the same id", async () => {
    const { owners, tableName } = await service();
    const id = randomUUID();
    const get = async () =>
      (
        await stack.harness.dynamo.client.send(
          new GetItemCommand({ TableName: tableName, Key: { pk: { S: id }, sk: { S: "session" } } }),
        )
      ).Item;
    await owners.claim(id, "ann");
    const seen = seenSession(unmarshall((await get())!))!;
    await stack.harness.dynamo.client.send(
      new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: id }, sk: { S: "session" } } }),
    );
    await owners.claim(id, "ann");
    expect(await owners.leaseAfterRead(id, "ann", {}, seen)).toEqual({ changed: true });
  });

  // A review's finding: a holder whose lease ran out could still let it go, putting back an earlier
  // turn's mark, between another turn's read and its lease; that turn then missed the mark.
  it("takes no lease on a read made before the last holder let go, even one whose lease had run out", async () => {
    const { tableName } = await service();
    const owners = new SessionOwners(stack.harness.dynamo.client, tableName);
    const id = randomUUID();
    await owners.claim(id, "ann");
    const late = (await owners.lease(id, "ann", { turn: { messageId: "late" } })).lease!;
    // Its renewals did not reach the table: its lease ran out while it still runs.
    await stack.harness.dynamo.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: id }, sk: { S: "session" } },
        UpdateExpression: "SET lease_until = :past",
        ExpressionAttributeValues: { ":past": { N: String(Date.now() - 1) } },
      }),
    );
    const seen = seenSession(
      unmarshall(
        (
          await stack.harness.dynamo.client.send(
            new GetItemCommand({ TableName: tableName, Key: { pk: { S: id }, sk: { S: "session" } } }),
          )
        ).Item!,
      ),
    )!;
    expect(seen.busy).toBe(false);
    await late.release({ mark: { restore: "an-earlier-turn" } });
    expect(await owners.leaseAfterRead(id, "ann", {}, seen)).toEqual({ changed: true });
  });

  it("looks for a state in the legacy key layout only for a session made before it", async () => {
    const { chat, owners, messages, tableName } = await service();
    // A thread made now (an Agent Server thread, before its first run) has no state anywhere.
    const made = randomUUID();
    await owners.claim(made, "ann");
    stack.meter.reset();
    await chat.reply({ userId: "ann", sessionId: made, message: "first" });
    expect(stack.meter.byCommand.QueryCommand).toBe(1);
    // A session whose record predates the layout is looked for in the legacy one too.
    const old = randomUUID();
    await owners.claim(old, "ann");
    await stack.harness.dynamo.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: old }, sk: { S: "session" } },
        UpdateExpression: "REMOVE state_layout",
      }),
    );
    stack.meter.reset();
    await chat.reply({ userId: "ann", sessionId: old, message: "first" });
    expect(stack.meter.byCommand.QueryCommand).toBe(2);
    expect(await messages(old)).toHaveLength(2);
  });

  // A review's finding: the count taken with the lease stayed counted when the repair of an
  // earlier, unfinished turn failed (503), and every retry during the outage counted again.
  it("gives the count back when the repair of an unfinished turn fails, however often it is retried", async () => {
    let storeDown = false;
    const conversations = Object.create(stack.harness.conversations, {
      get: {
        value: (...args: unknown[]) =>
          storeDown
            ? Promise.reject(new Error("transcript store down"))
            : (stack.harness.conversations.get as (...a: unknown[]) => unknown).apply(
                stack.harness.conversations,
                args,
              ),
      },
    });
    const { chat, owners, usage } = await service({ tokensPerDay: 1_000_000, turnsPerMinute: 100 }, conversations);
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    // An earlier turn that died holding the lease: its mark stays on the owner record.
    const dead = (await owners.lease(sessionId, "ann", { turn: { messageId: "ghost" } })).lease!;
    await dead.release({ mark: "keep" });
    const before = await usage!.today("ann");
    storeDown = true;
    for (let i = 0; i < 3; i++)
      expect((await refusal(chat.reply({ userId: "ann", sessionId, message: "second" }))).status).toBe(503);
    const after = await usage!.today("ann");
    expect({ turns: after.turns, held: after.held, tokens: after.tokens }).toEqual({
      turns: before.turns,
      held: before.held,
      tokens: before.tokens,
    });
    storeDown = false;
    await chat.reply({ userId: "ann", sessionId, message: "back" });
  });

  it("runs with the settings its lease write found, when they changed after its read", async () => {
    const { chat, owners } = await service();
    const { sessionId } = await chat.reply({ userId: "ann", message: "first" });
    const leaseAfterRead = owners.leaseAfterRead.bind(owners);
    (owners as { leaseAfterRead: SessionOwners["leaseAfterRead"] }).leaseAfterRead = async (...args) => {
      await owners.updateSettings(sessionId, "ann", { memory: false });
      return leaseAfterRead(...args);
    };
    const { trace } = await chat.reply({ userId: "ann", sessionId, message: "second" });
    const settings = trace.find((step) => step.type === "settings") as { settings?: { memory?: boolean } };
    expect(settings.settings?.memory).toBe(false);
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
