import { type AIMessage, type AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import * as z from "zod";
import { toolNamed } from "../../../graph/tools/registry";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { OFFLINE_HINT } from "../../../shared/models/offline-rules";

/** A tool that does nothing, carrying the registry tool's offline hint: the stand-in knows tools only by their hints. */
const noop = (name: string) =>
  tool(async () => "", {
    name,
    description: name,
    schema: z.object({ query: z.string().optional(), content: z.string().optional() }),
    metadata: { [OFFLINE_HINT]: toolNamed(name)!.offline },
  });
const tools = [noop("store_memory"), noop("recall_memory"), noop("search_knowledge_base"), noop("get_user_context")];
const model = new OfflineChatModel({}).bindTools(tools);

describe("offline stand-in model", () => {
  it("calls store_memory for 'remember that ...'", async () => {
    const out = (await model.invoke([new HumanMessage("Remember that my favourite colour is teal.")])) as AIMessage;
    expect(out.tool_calls).toEqual([
      expect.objectContaining({
        name: "store_memory",
        args: { content: "my favourite colour is teal", subject: "favourite colour" },
      }),
    ]);
  });

  it("calls the recall and knowledge tools for a question", async () => {
    const out = (await model.invoke([new HumanMessage("What plan am I on?")])) as AIMessage;
    const general = (await model.invoke([new HumanMessage("how do refunds work?")])) as AIMessage;
    expect(general.tool_calls?.map((c) => c.name)).toEqual(["recall_memory", "search_knowledge_base"]);
    expect(out.tool_calls?.map((c) => c.name)).toEqual(["recall_memory", "search_knowledge_base", "get_user_context"]);
    expect(out.tool_calls?.[0]?.args).toEqual({ query: "What plan am I on?" });
  });

  it("answers from what the tools returned", async () => {
    const call = (await model.invoke([new HumanMessage("What plan am I on?")])) as AIMessage;
    const [recall, knowledge, context] = call.tool_calls!;
    const out = await model.invoke([
      new HumanMessage("What plan am I on?"),
      call,
      new ToolMessage({
        tool_call_id: recall!.id!,
        name: "recall_memory",
        content: JSON.stringify({
          success: true,
          results: [{ content: "The user prefers annual billing", score: 0.8 }],
        }),
      }),
      new ToolMessage({
        tool_call_id: knowledge!.id!,
        name: "search_knowledge_base",
        content: JSON.stringify({ success: true, results: [], message: "No matching documents." }),
      }),
      new ToolMessage({
        tool_call_id: context!.id!,
        name: "get_user_context",
        content: JSON.stringify({ success: false, error: "The user's account details are unavailable right now." }),
      }),
    ]);
    expect(out.content).toBe(
      "Here is what I found:\n- The user prefers annual billing\n(The user's account details are unavailable right now.)",
    );
  });

  it("replies plainly otherwise, and when the tool a rule needs is not bound", async () => {
    expect((await model.invoke([new HumanMessage("hi")])).content).toBe("Hello! How can I help you today?");
    const bare = new OfflineChatModel({});
    const out = (await bare.invoke([new HumanMessage("remember that I like tea")])) as AIMessage;
    expect(out.tool_calls ?? []).toEqual([]);
    expect(out.content).toContain("remember that I like tea");
  });

  it("streams a reply word by word, and a tool call as one chunk", async () => {
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream([new HumanMessage("I had a long day at work today")]))
      chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.map((c) => c.content).join("")).toMatch(/^I hear you: "I had a long day at work today"/);

    const toolChunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream([new HumanMessage("remember I work at Acme")])) toolChunks.push(chunk);
    expect(toolChunks).toHaveLength(1);
    expect(toolChunks[0]!.tool_calls?.[0]).toMatchObject({ name: "store_memory", args: { content: "I work at Acme" } });
  });

  it("is deterministic", async () => {
    const a = await model.invoke([new HumanMessage("tell me a story about cats")]);
    const b = await model.invoke([new HumanMessage("tell me a story about cats")]);
    expect((a as AIMessage).tool_calls?.map((c) => [c.name, c.args])).toEqual(
      (b as AIMessage).tool_calls?.map((c) => [c.name, c.args]),
    );
  });
});

describe("offline stand-in's context window", () => {
  it("reports usage by the stated rule: 4 bytes a token, 4 per message", async () => {
    const plain = new OfflineChatModel({});
    const reply = (await plain.invoke([new HumanMessage("x".repeat(400))])) as AIMessage;
    expect(reply.usage_metadata!.input_tokens).toBe(4 + 100);
    expect(reply.usage_metadata!.output_tokens).toBeGreaterThan(0);
    expect(reply.usage_metadata!.total_tokens).toBe(
      reply.usage_metadata!.input_tokens + reply.usage_metadata!.output_tokens,
    );
    // Streaming reports the same usage once.
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await plain.stream([new HumanMessage("x".repeat(400))])) {
      streamed = streamed ? streamed.concat(chunk) : chunk;
    }
    expect(streamed!.usage_metadata).toMatchObject(reply.usage_metadata!);
  });

  it("rejects an input over its window as Bedrock does: ValidationException, 400, 'Input is too long'", async () => {
    const small = new OfflineChatModel({ contextWindow: 100 });
    await expect(small.invoke([new HumanMessage("x".repeat(384))])).resolves.toBeDefined(); // 4 + 96
    const err = await small.invoke([new HumanMessage("x".repeat(404))]).catch((e: unknown) => e); // 4 + 101
    expect(err).toMatchObject({
      name: "ValidationException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
      message: "Input is too long for requested model.",
    });
  });
});
