import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
import { ChatBedrockConverse } from "@langchain/aws";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { mockClient } from "aws-sdk-client-mock";
import * as z from "zod";
import { contextWindow } from "../../../graph/chat/context";
import { buildChatGraph } from "../../../graph/chat/graph";
import { promptCachePolicy } from "../../../graph/chat/prompt-cache";
import { TraceCollector } from "../../../graph/chat/trace";
import type { TraceStep } from "../../../shared/stores/conversations";

// Bedrock cannot run here: the requests are held to the Converse shapes AWS documents for
// prompt caching (a `cachePoint` block in system, in toolConfig.tools and in message
// content) and the responses carry its usage fields (cacheReadInputTokens, cacheWriteInputTokens).
const bedrock = mockClient(BedrockRuntimeClient);
// Restored after the file: a worker runs other files after it (isolate: false), which send for real.
afterAll(() => bedrock.restore());
beforeEach(() => bedrock.reset());

const CLAUDE = "us.anthropic.claude-3-7-sonnet-20250219-v1:0";
const NOVA = "amazon.nova-lite-v1:0";
const POINT = { cachePoint: { type: "default" } };

const lookupPlan = tool(async ({ customer }) => `${customer} is on the Pro plan`, {
  name: "lookup_plan",
  description: "Looks up a customer's plan",
  schema: z.object({ customer: z.string() }),
});

const reply = (text: string, usage: Record<string, number>) => ({
  output: { message: { role: "assistant" as const, content: [{ text }] } },
  stopReason: "end_turn" as const,
  usage: { inputTokens: 0, outputTokens: 5, totalTokens: 5, ...usage },
  metrics: { latencyMs: 50 },
});

function graphFor(modelId: string) {
  const model = new ChatBedrockConverse({
    model: modelId,
    region: "us-east-1",
    client: new BedrockRuntimeClient({ region: "us-east-1" }),
  });
  return buildChatGraph({
    model,
    tools: [lookupPlan],
    checkpointer: new MemorySaver(),
    context: { budget: 48_000, summarizer: model, cache: promptCachePolicy(modelId) },
  });
}

const countPoints = (input: unknown) => JSON.stringify(input).split('"cachePoint"').length - 1;

describe("prompt caching on Bedrock Converse", () => {
  it("knows which models cache, by model id, inference profile or ARN", () => {
    expect(promptCachePolicy(CLAUDE)).toEqual({ minTokens: 1024, tools: true });
    expect(
      promptCachePolicy("arn:aws:bedrock:us-east-1:1:inference-profile/eu.anthropic.claude-sonnet-4-20250514-v1:0"),
    ).toEqual({ minTokens: 1024, tools: true });
    expect(promptCachePolicy("anthropic.claude-3-5-haiku-20241022-v1:0")?.minTokens).toBe(2048);
    expect(promptCachePolicy(NOVA)).toEqual({ minTokens: 1000, tools: false });
    expect(promptCachePolicy("anthropic.claude-3-haiku-20240307-v1:0")).toBeUndefined();
    expect(promptCachePolicy("meta.llama3-70b-instruct-v1:0")).toBeUndefined();
    expect(promptCachePolicy(undefined)).toBeUndefined();
  });

  it("marks tools, system and the stable history on Claude, and reports cache reads and writes in the trace", async () => {
    bedrock
      .on(ConverseCommand)
      .resolvesOnce(reply("Noted.", { inputTokens: 1400, cacheWriteInputTokens: 0 }))
      .resolvesOnce(reply("Yes.", { inputTokens: 20, cacheReadInputTokens: 1300, cacheWriteInputTokens: 110 }));
    const graph = graphFor(CLAUDE);
    const config = { configurable: { thread_id: "t" } };
    // A first message long enough for the history prefix to pass Claude 3.7's 1,024-token minimum.
    await graph.invoke({ messages: [new HumanMessage(`Context: ${"the quick brown fox ".repeat(300)}`)] }, config);
    const steps: TraceStep[] = [];
    const collector = new TraceCollector((s) => steps.push(s));
    await graph.invoke({ messages: [new HumanMessage("Is that all?")] }, { ...config, callbacks: [collector] });

    const input = bedrock.commandCalls(ConverseCommand)[1]!.args[0].input;
    expect(input.system).toEqual([{ text: expect.stringContaining("helpful assistant") }, POINT]);
    expect(input.toolConfig!.tools!.at(-1)).toEqual(POINT);
    expect(input.toolConfig!.tools!.filter((t) => "toolSpec" in t)).toHaveLength(1);
    const [first, answer, current] = input.messages!;
    expect(first!.role).toBe("user");
    expect(first!.content).not.toContainEqual(POINT);
    // The end of the stable prefix: the last message before the current turn.
    expect(answer).toEqual({ role: "assistant", content: [{ text: "Noted." }, POINT] });
    expect(current!.content).toEqual([{ text: "Is that all?" }, POINT]);
    expect(countPoints(input)).toBeLessThanOrEqual(4);

    const model = steps.find((s) => s.type === "model")!;
    expect(model.usage).toMatchObject({
      input_tokens: 20 + 1300 + 110,
      output_tokens: 5,
      cache_read_tokens: 1300,
      cache_write_tokens: 110,
    });
  });

  it("puts no cache point on tools for Nova, which does not cache them", async () => {
    bedrock.on(ConverseCommand).resolves(reply("Hi.", { inputTokens: 900 }));
    await graphFor(NOVA).invoke({ messages: [new HumanMessage("hello")] }, { configurable: { thread_id: "n" } });
    const input = bedrock.commandCalls(ConverseCommand)[0]!.args[0].input;
    expect(input.toolConfig!.tools!.some((t) => "cachePoint" in t)).toBe(false);
    expect(input.system).toEqual([{ text: expect.any(String) }, POINT]);
  });

  it("sends the running summary after the system cache point, as context and not as a message", async () => {
    bedrock.on(ConverseCommand).resolves(reply("Sure.", { inputTokens: 900 }));
    const model = new ChatBedrockConverse({
      model: CLAUDE,
      region: "us-east-1",
      client: new BedrockRuntimeClient({ region: "us-east-1" }),
    });
    const window = contextWindow("You are helpful.", 0, {
      budget: 48_000,
      summarizer: model,
      cache: promptCachePolicy(CLAUDE),
    });
    const { messages } = window.modelInput({
      messages: [new HumanMessage({ id: "h1", content: "and the price?" })],
      summary: '- The user said: "my name is Ada"',
      tokenRatio: 1,
    });
    await model.invoke(messages);
    const input = bedrock.commandCalls(ConverseCommand)[0]!.args[0].input;
    expect(input.system).toEqual([
      { text: "You are helpful." },
      POINT,
      { text: expect.stringMatching(/^Summary of the earlier conversation[\s\S]*recall_memory[\s\S]*my name is Ada/) },
    ]);
    expect(input.messages).toEqual([{ role: "user", content: [{ text: "and the price?" }] }]);
    // Not a supporting model: no cache points at all.
    const plain = contextWindow("You are helpful.", 0, { budget: 48_000, summarizer: model });
    const out = plain.modelInput({
      messages: [new HumanMessage("x"), new AIMessage("y"), new HumanMessage("z")],
      summary: "",
      tokenRatio: 1,
    });
    expect(countPoints(out.messages.map((m) => m.content))).toBe(0);
  });
});
