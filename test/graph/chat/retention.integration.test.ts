import { DeleteCommand, DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { expireIdleSessions } from "../../../graph/chat/retention";
import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService } from "../../../graph/chat/service";
import type { Backends } from "../../../shared/backends";
import { loadConfig } from "../../../shared/config";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { OWNER_SORT_KEY } from "../../../shared/stores/session-owners";
import { backendsHarness } from "../../support/stack";

// Retention: sessions idle longer than SESSION_RETENTION_DAYS are deleted everywhere (state,
// owner record, transcript, session row), with the clock injected; an active one stays, a busy
// one is left for the next sweep, and a sweep run twice deletes nothing twice.

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

const DAY = 86_400_000;

async function setup(retentionDays?: number) {
  const { checkpointer, owners, tableName } = await harness.stateTables();
  const graph = buildChatGraph({ model: new OfflineChatModel(), tools: [], checkpointer });
  const chat = new ChatService({ graph, owners, conversations: harness.conversations, recursionLimit: 12 });
  const config = loadConfig({
    CHECKPOINT_TABLE: tableName,
    SESSION_QUEUE_WAIT_MS: "0",
    ...(retentionDays ? { SESSION_RETENTION_DAYS: String(retentionDays) } : {}),
  });
  const backends: Backends = {
    config,
    dynamo: harness.dynamo.client,
    conversations: harness.conversations,
    store: harness.store,
    userData: harness.userData,
  };
  const items = async (sessionId: string) =>
    (
      await DynamoDBDocumentClient.from(harness.dynamo.client).send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :p",
          ExpressionAttributeValues: { ":p": sessionId },
        }),
      )
    ).Items ?? [];
  return { chat, owners, backends, items, tableName };
}

/** Moves a session's last activity, as if its last turn had been then. */
const touch = (sessionId: string, at: number) =>
  harness.postgres.query("update agent_sessions set updated_at = $1 where session_id = $2", [
    new Date(at).toISOString(),
    sessionId,
  ]);

describe("session retention", () => {
  it("deletes idle sessions everywhere and keeps active ones; a second sweep finds nothing", async () => {
    const { chat, backends, items } = await setup(30);
    const idle = (await chat.reply({ userId: "rita", message: "hello" })).sessionId;
    const active = (await chat.reply({ userId: "rita", message: "hello again" })).sessionId;
    const now = Date.now() + 31 * DAY;
    await touch(active, now - 29 * DAY);

    expect(await expireIdleSessions(backends, now)).toMatchObject({ expired: 1, busy: 0 });
    expect(await items(idle)).toEqual([]);
    expect(await harness.conversations.get(idle)).toBeUndefined();
    expect((await harness.postgres.query("select 1 from agent_sessions where session_id = $1", [idle])).rows).toEqual(
      [],
    );
    expect((await items(active)).length).toBeGreaterThan(0);
    expect(await harness.conversations.get(active)).toBeDefined();

    expect(await expireIdleSessions(backends, now)).toMatchObject({ expired: 0, busy: 0 });
    // The next day, the other one has been idle long enough too.
    expect(await expireIdleSessions(backends, now + 2 * DAY)).toMatchObject({ expired: 1 });
    expect(await items(active)).toEqual([]);
  });

  it("removes what is left of a session whose state DynamoDB's TTL already took", async () => {
    const { chat, backends, items, tableName } = await setup(7);
    const { sessionId } = await chat.reply({ userId: "sam", message: "hello" });
    await DynamoDBDocumentClient.from(harness.dynamo.client).send(
      new DeleteCommand({ TableName: tableName, Key: { pk: sessionId, sk: OWNER_SORT_KEY } }),
    );
    expect(await expireIdleSessions(backends, Date.now() + 8 * DAY)).toMatchObject({ expired: 1 });
    expect(await items(sessionId)).toEqual([]);
    expect(await harness.conversations.get(sessionId)).toBeUndefined();
  });

  it("leaves a session a turn holds for the next sweep", async () => {
    const { chat, owners, backends } = await setup(7);
    const { sessionId } = await chat.reply({ userId: "tia", message: "hello" });
    const { lease } = await owners.lease(sessionId, "tia");
    try {
      expect(await expireIdleSessions(backends, Date.now() + 8 * DAY)).toMatchObject({ expired: 0, busy: 1 });
    } finally {
      await lease!.release();
    }
    expect(await expireIdleSessions(backends, Date.now() + 8 * DAY)).toMatchObject({ expired: 1, busy: 0 });
  });

  it("does nothing without SESSION_RETENTION_DAYS", async () => {
    const { chat, backends, items } = await setup();
    const { sessionId } = await chat.reply({ userId: "uma", message: "hello" });
    expect(await expireIdleSessions(backends, Date.now() + 3650 * DAY)).toEqual({ expired: 0, busy: 0 });
    expect((await items(sessionId)).length).toBeGreaterThan(0);
  });
});
