import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService, type ChatReply } from "../../../graph/chat/service";
import { chatTools } from "../../../graph/tools/registry";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { meter, type Meter } from "../../support/dynamo-meter";
import { backendsHarness } from "../../support/stack";

// DynamoDB requests on a chat turn's path, every one a network round trip in a region: the
// session's owner record (owner check, project and lease in one conditional update; released in
// one more), the checkpoint read, and the checkpoint written once when the run exits. The offline
// stand-in model (not a language model) drives the turns deterministically.

let harness: Awaited<ReturnType<typeof backendsHarness>>;
let m: Meter;
beforeAll(async () => {
  harness = await backendsHarness();
  m = meter(harness.dynamo.client);
}, 60_000);
afterAll(() => harness.close());

async function service() {
  const { checkpointer, owners } = await harness.stateTables();
  const tools = chatTools({ store: harness.store, embeddings: new HashingEmbeddings(1024), minMemoryScore: 0.15 });
  const graph = buildChatGraph({ model: new OfflineChatModel(), tools, checkpointer });
  return new ChatService({ graph, owners, conversations: harness.conversations, recursionLimit: 12 });
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
});
