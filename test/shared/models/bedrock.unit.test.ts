import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { ChatBedrockConverse } from "@langchain/aws";
import { type AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { mockClient } from "aws-sdk-client-mock";
import * as z from "zod";
import { buildChatGraph } from "../../../graph/chat/graph";
import { loadConfig } from "../../../shared/config";
import { bedrockClient } from "../../../shared/models/bedrock-client";
import { createChatModel } from "../../../shared/models/chat-model";

// Bedrock cannot run here: these tests hold the adapter to the Converse and ConverseStream
// request and response shapes AWS documents, including a toolUse round trip.
const bedrock = mockClient(BedrockRuntimeClient);
// Restored after the file: a worker runs other files after it (isolate: false), which send for real.
afterAll(() => bedrock.restore());
beforeEach(() => bedrock.reset());

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
const usage = { inputTokens: 12, outputTokens: 7, totalTokens: 19 };

const lookupPlan = tool(async ({ customer }) => `${customer} is on the Pro plan`, {
  name: "lookup_plan",
  description: "Looks up a customer's plan",
  schema: z.object({ customer: z.string() }),
});

describe("Bedrock chat model (Converse)", () => {
  it("runs a toolUse round trip through the chat graph", async () => {
    bedrock
      .on(ConverseCommand)
      .resolvesOnce({
        output: {
          message: {
            role: "assistant",
            content: [
              { text: "Let me check." },
              { toolUse: { toolUseId: "tooluse_1", name: "lookup_plan", input: { customer: "Ada" } } },
            ],
          },
        },
        stopReason: "tool_use",
        usage,
        metrics: { latencyMs: 120 },
      })
      .resolvesOnce({
        output: { message: { role: "assistant", content: [{ text: "Ada is on the Pro plan." }] } },
        stopReason: "end_turn",
        usage,
        metrics: { latencyMs: 90 },
      });
    const model = new ChatBedrockConverse({
      model: MODEL,
      region: "us-east-1",
      client: new BedrockRuntimeClient({ region: "us-east-1" }),
    });
    const graph = buildChatGraph({ model, tools: [lookupPlan], checkpointer: new MemorySaver() });

    const state = await graph.invoke(
      { messages: [new HumanMessage("Which plan is Ada on?")] },
      { configurable: { thread_id: "t" } },
    );

    expect(state.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect(state.messages[2]!.content).toBe("Ada is on the Pro plan");
    expect(state.messages[3]!.content).toBe("Ada is on the Pro plan.");

    const [first, second] = bedrock.commandCalls(ConverseCommand).map((c) => c.args[0].input);
    expect(first!.modelId).toBe(MODEL);
    expect(first!.system?.[0]).toEqual({ text: expect.stringContaining("lookup_plan") });
    expect(first!.toolConfig?.tools?.[0]?.toolSpec?.name).toBe("lookup_plan");
    // The system prompt is sent, never stored as a message of the thread.
    expect(first!.messages?.map((m) => m.role)).toEqual(["user"]);
    expect(second!.messages?.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(second!.messages?.[2]?.content?.[0]).toEqual({
      toolResult: { toolUseId: "tooluse_1", content: [{ text: "Ada is on the Pro plan" }] },
    });
  });

  it("streams text deltas and a tool call from ConverseStream", async () => {
    const events = [
      { messageStart: { role: "assistant" } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "Checking " } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "now." } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      {
        contentBlockStart: {
          contentBlockIndex: 1,
          start: { toolUse: { toolUseId: "tooluse_2", name: "lookup_plan" } },
        },
      },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{"customer":' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '"Ada"}' } } } },
      { contentBlockStop: { contentBlockIndex: 1 } },
      { messageStop: { stopReason: "tool_use" } },
      { metadata: { usage, metrics: { latencyMs: 80 } } },
    ];
    bedrock.on(ConverseStreamCommand).callsFake(() => ({
      stream: (async function* () {
        yield* events;
      })(),
    }));
    const model = new ChatBedrockConverse({
      model: MODEL,
      region: "us-east-1",
      client: new BedrockRuntimeClient({ region: "us-east-1" }),
    }).bindTools([lookupPlan]);
    let full: AIMessageChunk | undefined;
    const texts: string[] = [];
    for await (const chunk of await model.stream([new HumanMessage("Which plan is Ada on?")])) {
      if (typeof chunk.content === "string" && chunk.content) texts.push(chunk.content);
      full = full ? full.concat(chunk) : chunk;
    }
    expect(texts.join("")).toBe("Checking now.");
    expect(full?.tool_calls).toEqual([
      expect.objectContaining({ id: "tooluse_2", name: "lookup_plan", args: { customer: "Ada" } }),
    ]);
  });

  it("is chosen when BEDROCK_MODEL_ID is set, on a client that retries throttling adaptively", async () => {
    const config = loadConfig({ BEDROCK_MODEL_ID: MODEL, BEDROCK_REGION: "eu-west-1" });
    const { value, description } = await createChatModel(config);
    expect(value).toBeInstanceOf(ChatBedrockConverse);
    expect(description).toContain(MODEL);
    const client = bedrockClient(config);
    expect(await client.config.maxAttempts()).toBe(5);
    expect(((await client.config.retryStrategy()) as { mode?: string }).mode).toBe("adaptive");
    expect((await createChatModel(loadConfig({}))).description).toMatch(/offline/);
  });
});
