import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { ChatBedrockConverse } from "@langchain/aws";
import { HumanMessage } from "@langchain/core/messages";
import { mockClient } from "aws-sdk-client-mock";
import { randomBytes } from "node:crypto";
import { buildChatGraph } from "../../../graph/chat/graph";
import { humanContent, type ImageRef, withImages } from "../../../graph/chat/images";
import { checkpointHarness } from "../../support/dynamo";
import { itemSize } from "../../support/dynamo-meter";

// Bedrock cannot run here: the request is held to the Converse shape AWS documents for images
// (an `image` content block with `format` and `source.bytes`), and the checkpoint to references.
const bedrock = mockClient(BedrockRuntimeClient);
// Restored after the file: a worker runs other files after it (isolate: false), which send for real.
afterAll(() => bedrock.restore());
let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());
beforeEach(() => bedrock.reset());

const ref = (n: number): ImageRef => ({
  type: "image_ref",
  file_id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  key: `users/u/sessions/s/${n}`,
  name: `photo-${n}.png`,
  media_type: "image/png",
  bytes: 40_000,
  width: 640,
  height: 480,
});

describe("images in messages", () => {
  it("reach Converse as image blocks while the checkpoint holds only their references", async () => {
    const picture = new Uint8Array(randomBytes(40_000));
    bedrock.on(ConverseCommand).resolves({
      output: { message: { role: "assistant", content: [{ text: "A cat on a sofa." }] } },
      stopReason: "end_turn",
      usage: { inputTokens: 1700, outputTokens: 6, totalTokens: 1706 },
      metrics: { latencyMs: 40 },
    });
    const { saver, tableName } = await harness.newSaver();
    const graph = buildChatGraph({
      model: new ChatBedrockConverse({
        model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        region: "us-east-1",
        client: new BedrockRuntimeClient({ region: "us-east-1" }),
      }),
      tools: [],
      checkpointer: saver,
      readImage: async (r) => (r.key === ref(1).key ? picture : undefined),
    });
    const thread = { configurable: { thread_id: "with-image" } };
    await graph.invoke(
      { messages: [new HumanMessage({ content: humanContent("What is this?", [ref(1)]) as never })] },
      thread,
    );

    const input = bedrock.commandCalls(ConverseCommand)[0]!.args[0].input;
    expect(input.messages![0]!.content).toEqual([
      { text: "What is this?" },
      { image: { format: "png", source: { bytes: picture } } },
    ]);

    const items = (await harness.dynamo.client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items.length).toBeGreaterThan(0);
    const largest = Math.max(...items.map((i) => itemSize(i as never)));
    expect(largest).toBeLessThan(4_000);
    const state = await graph.getState(thread);
    expect(JSON.stringify(state.values.messages[0].content)).toContain('"image_ref"');
  });

  it("resends the newest 20 images and stubs older ones and unreadable ones", async () => {
    const messages = Array.from(
      { length: 22 },
      (_, i) => new HumanMessage({ content: humanContent(`turn ${i}`, [ref(i)]) as never }),
    );
    const read = async (r: ImageRef) => (r.name === "photo-21.png" ? undefined : new Uint8Array([1, 2, 3]));
    const sent = await withImages(messages, read);
    const kinds = sent.map((m) => (m.content as { type: string; text?: string }[])[1]!);
    expect(kinds[21]).toEqual({ type: "text", text: "[image photo-21.png is no longer available]" });
    expect(kinds.slice(1, 21).every((b) => b.type === "image")).toBe(true);
    expect(kinds[0]).toEqual({
      type: "text",
      text: "[image photo-0.png, image/png, 640x480: sent earlier, not repeated]",
    });
    // The stored messages are untouched: the references stay references.
    expect((messages[0]!.content as { type: string }[])[1]!.type).toBe("image_ref");
  });
});
