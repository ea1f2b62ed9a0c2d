import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildChatRuntime } from "../../../graph/chat/runtime";
import type { ChatReply } from "../../../graph/chat/service";
import { FolderFileObjects } from "../../../infra/local/uploads";
import { loadConfig } from "../../../shared/config";
import { inProcessEngine } from "../../../shared/files/data-core";
import { fileService } from "../../../shared/files/service";
import type { Backends } from "../../../shared/backends";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { meter, type Meter } from "../../support/dynamo-meter";
import { backendsHarness } from "../../support/stack";

// DynamoDB requests on a chat turn's path, every one a network round trip in a region: the
// session's owner record (owner check, project and lease in one conditional update; released in
// one more), the checkpoint read, and the checkpoint written once when the run exits. The offline
// stand-in model (not a language model) drives the turns deterministically. The chat service is
// the production one (graph/chat/runtime.ts, as Lambda and the local stack build it), attachments
// bucket and data engine included: a read any turn adds, wherever it is wired, is counted here.

let harness: Awaited<ReturnType<typeof backendsHarness>>;
let m: Meter;
beforeAll(async () => {
  harness = await backendsHarness();
  m = meter(harness.dynamo.client);
}, 60_000);
const folders: string[] = [];
afterAll(async () => {
  await harness.close();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** The production wiring on a fresh table and attachments folder. */
async function production() {
  const { tableName } = await harness.stateTables();
  const dir = mkdtempSync(join(tmpdir(), "round-trips-"));
  folders.push(dir);
  const files = new FolderFileObjects(dir, () => "http://localhost", "/_local/files/", { writeOnce: true });
  const backends: Backends = {
    config: loadConfig({ CHECKPOINT_TABLE: tableName, OFFLINE_STREAM_DELAY_MS: "0", AGENT_RECURSION_LIMIT: "12" }),
    dynamo: harness.dynamo.client,
    conversations: harness.conversations,
    store: harness.store,
    files,
    dataEngine: inProcessEngine((key) => files.read(key)),
  };
  return { backends, runtime: await buildChatRuntime(backends), tableName };
}

async function service() {
  return (await production()).runtime.chat;
}

async function counted(run: () => Promise<ChatReply>) {
  m.reset();
  const reply = await run();
  return { reply, requests: m.requests, byCommand: { ...m.byCommand } };
}

const toolCalls = (reply: ChatReply) => reply.trace.filter((step) => step.type === "tool").map((step) => step.name);

describe("DynamoDB requests per chat turn", () => {
  it("a plain turn on an existing session makes 4: lease, checkpoint read, checkpoint write, release", async () => {
    const chat = await service();
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    const plain = await counted(() => chat.reply({ userId: "ria", sessionId, message: "thanks, all good" }));
    expect(toolCalls(plain.reply)).toEqual([]);
    expect(plain.byCommand).toEqual({ UpdateItemCommand: 2, QueryCommand: 1, BatchWriteItemCommand: 1 });
    expect(plain.requests).toBeLessThanOrEqual(4);
  });

  it("a turn with one tool call makes no more than a plain one (the goal is 6)", async () => {
    const chat = await service();
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    const tool = await counted(() => chat.reply({ userId: "ria", sessionId, message: "remember that my cat is Tom" }));
    expect(toolCalls(tool.reply)).toEqual(["store_memory"]);
    expect(tool.requests).toBeLessThanOrEqual(6);
    expect(tool.requests).toBe(4);
  });

  it("a new session's first turn makes 4: the owner record with its lease in one put", async () => {
    const chat = await service();
    const first = await counted(() => chat.reply({ userId: "ria", message: "hello there" }));
    expect(first.byCommand).toEqual({
      PutItemCommand: 1,
      QueryCommand: 1,
      BatchWriteItemCommand: 1,
      UpdateItemCommand: 1,
    });
  });

  it("stays at 4 as the session grows, streamed or not: a warm container reads no history back", async () => {
    const chat = await service();
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    await chat.reply({ userId: "ria", sessionId, message: "remember that my cat is Tom" });
    for (const message of ["thanks", "thanks again", "fine", "all good"]) {
      for (const observer of [{}, { onToken: () => undefined }]) {
        m.reset();
        await chat.reply({ userId: "ria", sessionId, message }, observer);
        expect(m.byCommand).toEqual({ UpdateItemCommand: 2, QueryCommand: 1, BatchWriteItemCommand: 1 });
      }
    }
  });

  it("stays at 4 with data files in the session: the prompt's lines come with the owner record", async () => {
    const { backends, runtime, tableName } = await production();
    const chat = runtime.chat;
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    const files = fileService(backends)!;
    const csv = new TextEncoder().encode("region,amount\nnorth,1\nsouth,2\n");
    const made = await files.create("ria", sessionId, { name: "sales.csv", media_type: "text/csv", bytes: csv.length });
    const record = (await files.list("ria", sessionId))[0]!;
    await backends.files!.write(`users/ria/sessions/${sessionId}/${made.file_id}`, csv, "text/csv");
    expect(await files.complete("ria", sessionId, record.file_id)).toMatchObject({ status: "ready", table: "sales" });
    // What the prompt lists is on the owner record the lease update returns.
    const owner = await new SessionOwners(harness.dynamo.client, tableName).session(sessionId);
    expect(owner!.dataFiles).toMatchObject([{ name: "sales.csv", table: "sales", row_count: 2, column_count: 2 }]);
    for (const observer of [{}, { onToken: () => undefined }]) {
      const plain = await counted(() =>
        chat.reply({ userId: "ria", sessionId, message: "thanks, all good" }, observer),
      );
      expect(toolCalls(plain.reply)).toEqual([]);
      expect(plain.byCommand).toEqual({ UpdateItemCommand: 2, QueryCommand: 1, BatchWriteItemCommand: 1 });
    }
    // A deleted file leaves the owner record with it.
    await files.remove("ria", sessionId, record.file_id);
    expect((await new SessionOwners(harness.dynamo.client, tableName).session(sessionId))!.dataFiles).toEqual([]);
  });
});
