import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService } from "../../../graph/chat/service";
import { eraseUser } from "../../../graph/chat/user-erasure";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import type { Backends } from "../../../shared/backends";
import { loadConfig } from "../../../shared/config";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { AgentAssistants } from "../../../shared/stores/agent-assistants";
import { AgentCrons } from "../../../shared/stores/agent-crons";
import { backendsHarness } from "../../support/stack";

// An erasure lists the user's sessions round after round, until one finds nothing new. A probe's
// finding: assistants and crons were removed in its first round only, so one the user made while
// it ran (its create answered before the erasure did) survived, and a cron's schedule kept firing
// for the erased user.
let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

/** The backends an erasure runs on, over the harness's stores and the test's own state table. */
const backendsOn = (tableName: string, indexLagMs: number, extra: Partial<Backends> = {}): Backends => ({
  config: loadConfig({ CHECKPOINT_TABLE: tableName, USER_INDEX_LAG_MS: String(indexLagMs) }),
  dynamo: harness.dynamo.client,
  conversations: harness.conversations,
  store: harness.store,
  userData: harness.userData,
  ...extra,
});

/** An assistant of `userId`'s, written as POST /assistants writes one. */
function makeAssistant(assistants: AgentAssistants, userId: string) {
  const at = new Date().toISOString();
  const assistant = { graphId: "chat", name: "made", description: null, config: {}, context: {}, metadata: {} };
  return assistants.write(
    userId,
    { ...assistant, assistantId: crypto.randomUUID(), version: 1, createdAt: at, updatedAt: at },
    0,
    { asNewVersion: true, maxVersion: 1 },
  );
}

it("removes the assistants and crons made while it runs, with their schedules", async () => {
  const { checkpointer, owners, tableName } = await harness.stateTables();
  const graph = buildChatGraph({ model: new OfflineChatModel(), tools: [], checkpointer });
  const chat = new ChatService({ graph, owners, conversations: harness.conversations, recursionLimit: 12 });
  const removedSchedules: string[] = [];
  const backends = backendsOn(tableName, 0, {
    cronScheduler: { put: async () => undefined, remove: async (id) => void removedSchedules.push(id) },
  });
  const assistants = new AgentAssistants(harness.dynamo.client, tableName);
  const crons = new AgentCrons(harness.dynamo.client, tableName);
  const user = "yan";
  const at = new Date().toISOString();
  await chat.reply({ userId: user, message: "hello" });
  // The user keeps working while the erasure runs: a new session during its first round, an
  // assistant and a cron during its second.
  const real = new DynamoDBSaver({ client: harness.dynamo.client, tableName });
  let deletions = 0;
  const saver = {
    deleteThread: async (id: string) => {
      await real.deleteThread(id);
      deletions += 1;
      if (deletions === 1) await chat.reply({ userId: user, message: "a new session" });
      if (deletions === 2) {
        await makeAssistant(assistants, user);
        await crons.put({
          cronId: "late-cron",
          userId: user,
          threadId: id,
          assistantId: "chat",
          schedule: "0 9 * * 1",
          payload: {},
          metadata: {},
          enabled: true,
          createdAt: at,
          updatedAt: at,
        });
      }
    },
  };
  const report = await eraseUser(backends, user, saver);
  expect(deletions).toBe(2);
  expect(await assistants.list(user)).toEqual([]);
  expect(await crons.list(user)).toEqual([]);
  expect(removedSchedules).toEqual(["late-cron"]);
  expect(report).toMatchObject({ sessions: 2, assistants: 1, crons: 1 });
});

// A re-probe's finding: with assistants forcing rounds as sessions do, a user making assistants in
// a loop (no quota, no model call) kept an admin's erasure of them at 409, half done, for good.
it("cannot be held off by a user who keeps making assistants", async () => {
  const { tableName } = await harness.stateTables();
  const backends = backendsOn(tableName, 5);
  const assistants = new AgentAssistants(harness.dynamo.client, tableName);
  let erasing = true;
  const maker = (async () => {
    while (erasing) await makeAssistant(assistants, "zed");
  })();
  try {
    await expect(eraseUser(backends, "zed")).resolves.toMatchObject({ assistants: expect.any(Number) });
  } finally {
    erasing = false;
    await maker;
  }
});
