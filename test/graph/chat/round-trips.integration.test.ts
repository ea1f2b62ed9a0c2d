import type { ChatReply } from "../../../graph/chat/service";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { productionChat } from "../../support/production-chat";
import { meteredBackends } from "../../support/metered-backends";

// DynamoDB requests on a chat turn's path, every one a network round trip in a region: the
// session's owner record read with the latest checkpoint (one Query), the lease taken (one
// conditional update; released in one more), and the checkpoint written once when the run exits. The offline
// stand-in model (not a language model) drives the turns deterministically. The chat service is
// the production one (graph/chat/runtime.ts, as Lambda and the local stack build it), attachments
// bucket and data engine included: a read any turn adds, wherever it is wired, is counted here.

const stack = meteredBackends();
const closing: (() => void)[] = [];
afterAll(() => {
  for (const close of closing) close();
});

/** The production wiring on a fresh table and attachments folder. */
async function production() {
  const made = await productionChat(stack.harness);
  closing.push(made.close);
  return made;
}

async function service() {
  return (await production()).chat;
}

async function counted(run: () => Promise<ChatReply>) {
  stack.meter.reset();
  const reply = await run();
  return { reply, requests: stack.meter.requests, byCommand: { ...stack.meter.byCommand } };
}

const toolCalls = (reply: ChatReply) => reply.trace.filter((step) => step.type === "tool").map((step) => step.name);

describe("DynamoDB requests per chat turn", () => {
  it("a plain turn on an existing session makes 4: owner record and checkpoint read, lease, checkpoint write, release", async () => {
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

  it("a new session's first turn makes 3: the owner record with its lease in one put, and no read of a state it cannot have", async () => {
    const chat = await service();
    const first = await counted(() => chat.reply({ userId: "ria", message: "hello there" }));
    expect(first.byCommand).toEqual({ PutItemCommand: 1, BatchWriteItemCommand: 1, UpdateItemCommand: 1 });
  });

  it("stays at 4 as the session grows, streamed or not: a warm container reads no history back", async () => {
    const chat = await service();
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    await chat.reply({ userId: "ria", sessionId, message: "remember that my cat is Tom" });
    for (const message of ["thanks", "thanks again", "fine", "all good"]) {
      for (const observer of [{}, { onToken: () => undefined }]) {
        stack.meter.reset();
        await chat.reply({ userId: "ria", sessionId, message }, observer);
        expect(stack.meter.byCommand).toEqual({ UpdateItemCommand: 2, QueryCommand: 1, BatchWriteItemCommand: 1 });
      }
    }
  });

  it("stays at 4 with data files in the session: the prompt's lines come with the owner record", async () => {
    const { chat, tableName, attachCsv, files } = await production();
    const { sessionId } = await chat.reply({ userId: "ria", message: "hello there" });
    const record = await attachCsv("ria", sessionId, "sales.csv", "region,amount\nnorth,1\nsouth,2\n");
    expect(record).toMatchObject({ status: "ready", table: "sales" });
    // What the prompt lists is on the owner record the lease update returns.
    const owner = await new SessionOwners(stack.harness.dynamo.client, tableName).session(sessionId);
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
    expect((await new SessionOwners(stack.harness.dynamo.client, tableName).session(sessionId))!.dataFiles).toEqual([]);
  });
});
