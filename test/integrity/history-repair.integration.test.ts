import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
import { ChatBedrockConverse } from "@langchain/aws";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { mockClient } from "aws-sdk-client-mock";
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import * as z from "zod";
import { buildChatGraph } from "../../graph/chat/graph";
import { INTERRUPTED_REPLY, repairHistory } from "../../graph/chat/history";
import { ChatService } from "../../graph/chat/service";
import { converseProblems } from "../support/converse";
import { backendsHarness } from "../support/stack";

// Before every model call the history is a valid Converse conversation, even
// after a turn was killed mid-run. Bedrock cannot run here: the requests are built by
// @langchain/aws's own Converse request builder (ChatBedrockConverse over a mocked client) and
// checked against Converse's documented rules (test/support/converse.ts).

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

const bedrock = mockClient(BedrockRuntimeClient);
// Restored after the file: a worker runs other files after it (isolate: false), which send for real.
afterAll(() => bedrock.restore());
beforeEach(() => bedrock.reset());

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0";
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const converseModel = () =>
  new ChatBedrockConverse({
    model: MODEL,
    region: "us-east-1",
    client: new BedrockRuntimeClient({ region: "us-east-1" }),
  });
const said = (text: string) => ({
  output: { message: { role: "assistant" as const, content: [{ text }] } },
  stopReason: "end_turn" as const,
  usage,
});

/** A tool that runs until the run is killed. */
let toolStarted: () => void = () => {};
const slowLookup = tool(
  async (_args, config) =>
    new Promise<string>((_, reject) => {
      toolStarted();
      config?.signal?.addEventListener("abort", () => reject(new Error("killed")));
    }),
  { name: "lookup_order", description: "Looks up an order", schema: z.object({ order: z.string() }) },
);

/**
 * Runs one turn and kills it at `when`, as a kill -9 would: no undo, no release; the saver keeps
 * what it had written. Then the next turn goes through the chat service on the same thread.
 */
async function killedThenNext(kill: "before the model answers" | "during a tool call") {
  const { checkpointer: saver, owners } = await harness.stateTables();
  const inFlight: Promise<unknown>[] = [];
  const checkpointer = new Proxy(saver, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== "put" && prop !== "putWrites") return value;
      return (...args: unknown[]) => {
        const write = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        inFlight.push(write);
        return write;
      };
    },
  });
  const graph = buildChatGraph({ model: converseModel(), tools: [slowLookup], checkpointer });
  const sessionId = randomUUID();
  await owners.claim(sessionId, "nia");
  const killer = new AbortController();
  const reached = new Promise<void>((resolve) => {
    toolStarted = resolve;
    if (kill === "before the model answers")
      bedrock.on(ConverseCommand).callsFakeOnce(() => {
        resolve();
        return new Promise(() => {}); // the model never answers: the process dies first
      });
    else
      bedrock.on(ConverseCommand).resolvesOnce({
        output: {
          message: {
            role: "assistant",
            content: [{ toolUse: { toolUseId: "tooluse_killed", name: "lookup_order", input: { order: "A-17" } } }],
          },
        },
        stopReason: "tool_use",
        usage,
      });
  });
  const crashed = graph
    .invoke(
      { messages: [new HumanMessage({ id: randomUUID(), content: "Where is order A-17?" })] },
      { configurable: { thread_id: sessionId, user_id: "nia" }, signal: killer.signal },
    )
    .catch((err) => err);
  await reached;
  if (kill === "during a tool call") {
    // Killed once the agent step that asked for the tool is saved, as a crash during the tool finds it.
    for (let i = 0; i < 200; i++) {
      const { values } = await graph.getState({ configurable: { thread_id: sessionId } });
      if ((values.messages as BaseMessage[] | undefined)?.length === 2) break;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  killer.abort();
  await crashed;
  // The saver's writes already sent when the process died have landed; nothing after them. An
  // abort in process is not a kill -9: LangGraph still writes the step it was in once the abort
  // reaches it, so the next turn starts after those writes too, as if they landed before the
  // death (the next turn reads the session before taking its lease, which only a live holder's
  // writes could change).
  for (let settled = -1; settled !== inFlight.length;) {
    settled = inFlight.length;
    await Promise.allSettled(inFlight);
    await new Promise((r) => setTimeout(r, 100));
  }
  const left = (await graph.getState({ configurable: { thread_id: sessionId } })).values.messages as BaseMessage[];

  bedrock.on(ConverseCommand).resolves(said("Sorry about that: order A-17 shipped today."));
  const chat = new ChatService({ graph, owners, recursionLimit: 6 });
  const reply = await chat.reply({ userId: "nia", sessionId, message: "Hello? Any news?" });
  const request = bedrock.commandCalls(ConverseCommand).at(-1)!.args[0].input;
  return { left, reply, request };
}

describe("A turn killed mid-run leaves the next turn a valid Converse request", () => {
  it("after a kill before the model answered (a human message with no reply)", async () => {
    const { left, reply, request } = await killedThenNext("before the model answers");
    expect(left.map((m) => m.getType())).toEqual(["human"]);
    expect(converseProblems(request.messages)).toEqual([]);
    expect(request.messages?.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(request.messages?.[1]?.content).toEqual([{ text: INTERRUPTED_REPLY }]);
    expect(reply.reply).toBe("Sorry about that: order A-17 shipped today.");
  });

  it("after a kill during a tool call (a tool call with no result)", async () => {
    const { left, reply, request } = await killedThenNext("during a tool call");
    expect(left.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(converseProblems(request.messages)).toEqual([]);
    expect(request.messages?.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(request.messages?.[2]?.content?.[0]).toMatchObject({
      toolResult: { toolUseId: "tooluse_killed", content: [{ text: expect.stringContaining("interrupted") }] },
    });
    expect(reply.reply).toBe("Sorry about that: order A-17 shipped today.");
  });
});

describe("repairHistory", () => {
  const step = fc.oneof(
    fc.constant("human" as const),
    fc.constant("ai" as const),
    fc.constant("ai-empty" as const),
    fc.record({ calls: fc.integer({ min: 1, max: 3 }), answered: fc.integer({ min: 0, max: 3 }) }),
    fc.constant("orphan-tool" as const),
  );
  /** Histories of our own making: any mix of messages, calls answered fully, partly or not at all. */
  const history = (steps: fc.Arbitrary<(typeof step extends fc.Arbitrary<infer T> ? T : never)[]>) =>
    steps.map((kinds) => {
      const messages: BaseMessage[] = [];
      let n = 0;
      for (const kind of kinds) {
        n++;
        if (kind === "human") messages.push(new HumanMessage(`question ${n}`));
        else if (kind === "ai") messages.push(new AIMessage(`answer ${n}`));
        else if (kind === "ai-empty") messages.push(new AIMessage(""));
        else if (kind === "orphan-tool")
          messages.push(new ToolMessage({ tool_call_id: `nobody-${n}`, name: "t", content: "late" }));
        else {
          const ids = Array.from({ length: kind.calls }, (_, i) => `call-${n}-${i}`);
          messages.push(new AIMessage({ content: "", tool_calls: ids.map((id) => ({ id, name: "t", args: {} })) }));
          for (const id of ids.slice(0, kind.answered))
            messages.push(new ToolMessage({ tool_call_id: id, name: "t", content: "ok" }));
        }
      }
      messages.push(new HumanMessage("the new message"));
      return messages;
    });

  it("turns any history into a request Converse accepts", async () => {
    bedrock.on(ConverseCommand).resolves(said("ok"));
    const model = converseModel();
    await fc.assert(
      fc.asyncProperty(history(fc.array(step, { maxLength: 12 })), async (messages) => {
        await model.invoke(repairHistory(messages));
        const request = bedrock.commandCalls(ConverseCommand).at(-1)!.args[0].input;
        expect(converseProblems(request.messages)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("leaves a valid history as it is", () => {
    const valid = [
      new HumanMessage("hi"),
      new AIMessage({ content: "", tool_calls: [{ id: "a", name: "t", args: {} }] }),
      new ToolMessage({ tool_call_id: "a", name: "t", content: "ok" }),
      new AIMessage("done"),
      new HumanMessage("next"),
    ];
    const repaired = repairHistory(valid);
    expect(repaired).toHaveLength(valid.length);
    for (const [i, m] of repaired.entries()) expect(m).toBe(valid[i]);
  });
});
