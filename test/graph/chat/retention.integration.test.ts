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

  // A probe's finding: the sweep waited for a running turn (SESSION_QUEUE_WAIT_MS) and then deleted
  // the session its user had just been answered in.
  it("does not wait for a turn that holds the session: busy at once, and kept", async () => {
    const { chat, owners, backends } = await setup(7);
    const { sessionId } = await chat.reply({ userId: "val", message: "hello" });
    const { lease } = await owners.lease(sessionId, "val");
    const released = new Promise((r) => setTimeout(r, 300)).then(() => lease!.release());
    const waiting = { ...backends, config: { ...backends.config, SESSION_QUEUE_WAIT_MS: 20_000 } };
    expect(await expireIdleSessions(waiting, Date.now() + 8 * DAY)).toMatchObject({ expired: 0, busy: 1 });
    await released;
    expect(await harness.conversations.get(sessionId)).toBeDefined();
  });

  // The other half of that finding: a session that took a turn after the sweep listed it (a page
  // of 100 is deleted one by one) was deleted all the same.
  it("keeps a session that took a turn after the sweep listed it", async () => {
    const { chat, backends, items } = await setup(7);
    const { sessionId } = await chat.reply({ userId: "wes", message: "hello" });
    const now = Date.now() + 8 * DAY;
    const userData = backends.userData!;
    const listedThenUsed = {
      ...backends,
      userData: Object.assign(Object.create(userData), {
        idleSessions: async (before: Date, limit: number) => {
          const page = await userData.idleSessions(before, limit);
          if (page.some((s) => s.sessionId === sessionId)) await touch(sessionId, now);
          return page;
        },
      }),
    };
    // (Sessions of the tests before are idle by then too, and go.)
    expect(await expireIdleSessions(listedThenUsed, now)).toMatchObject({ busy: 1 });
    expect((await items(sessionId)).length).toBeGreaterThan(0);
    expect(await harness.conversations.get(sessionId)).toBeDefined();
  });

  // A session row its deletion cannot remove (no transcript of its user: no route makes one
  // today) was listed first again on every page, so the sweep went round it for good.
  it("visits a listed session once per sweep, even one whose row stays", async () => {
    const { backends } = await setup(7);
    const orphan = crypto.randomUUID();
    await harness.postgres.query(
      "insert into agent_sessions (session_id, user_id, name, updated_at) values ($1, 'xia', 'orphan', now() - interval '30 days')",
      [orphan],
    );
    const sweep = expireIdleSessions(backends, Date.now());
    const stuck = new Promise((r) => setTimeout(() => r("still sweeping after 10 s"), 10_000).unref());
    expect(await Promise.race([sweep, stuck])).toMatchObject({ expired: 1 });
  }, 20_000);

  it("does nothing without SESSION_RETENTION_DAYS", async () => {
    const { chat, backends, items } = await setup();
    const { sessionId } = await chat.reply({ userId: "uma", message: "hello" });
    expect(await expireIdleSessions(backends, Date.now() + 3650 * DAY)).toEqual({ expired: 0, busy: 0 });
    expect((await items(sessionId)).length).toBeGreaterThan(0);
  });
});
