import { HumanMessage } from "@langchain/core/messages";
import { EventStreamCodec } from "@smithy/core/event-streams";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../shared/config";
import { createChatModel } from "../../../shared/models/chat-model";
import { createEmbeddings } from "../../../shared/models/embeddings";

// Bedrock cannot run here: a local endpoint answering Converse, ConverseStream (its events in AWS's
// event stream encoding) and InvokeModel in the shapes AWS documents, counting the connections
// the clients open to it.
const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
/** One ConverseStream event as Bedrock sends it: its type in the headers, its JSON the body. */
const event = (type: string, body: unknown) =>
  codec.encode({
    headers: {
      ":event-type": { type: "string", value: type },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });
const STREAM = [
  event("messageStart", { role: "assistant" }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hel" } }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "lo" } }),
  event("contentBlockStop", { contentBlockIndex: 0 }),
  event("messageStop", { stopReason: "end_turn" }),
  event("metadata", { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }),
];

let server: Server;
let connections = 0;
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    req.resume().on("end", () => {
      if (req.url!.endsWith("/converse-stream")) {
        res.setHeader("content-type", "application/vnd.amazon.eventstream");
        // Written a part at a time, as a model streams, one event split across two writes.
        void (async () => {
          for (const [i, part] of STREAM.entries()) {
            const cut = i === 1 ? part.length >> 1 : part.length;
            res.write(part.subarray(0, cut));
            await new Promise((resolve) => setTimeout(resolve, 2));
            if (cut < part.length) res.write(part.subarray(cut));
          }
          res.end();
        })();
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify(
          req.url!.endsWith("/converse")
            ? {
                output: { message: { role: "assistant", content: [{ text: "hi" }] } },
                stopReason: "end_turn",
                usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
                metrics: { latencyMs: 1 },
              }
            : { embedding: [0.1, 0.2], inputTextTokenCount: 1 },
        ),
      );
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  vi.stubEnv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  // Never real Bedrock, whatever this machine's settings say.
  vi.stubEnv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false");
  vi.stubEnv("AWS_ACCESS_KEY_ID", "local");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "local");
  vi.stubEnv("AWS_REGION", "us-east-1");
});
afterAll(async () => {
  vi.unstubAllEnvs();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the Bedrock clients", () => {
  it("share one kept-alive connection between a container's chat model and embeddings", async () => {
    const config = loadConfig({ BEDROCK_MODEL_ID: "m", BEDROCK_EMBEDDING_MODEL_ID: "e" });
    const [model, embeddings] = await Promise.all([createChatModel(config), createEmbeddings(config)]);
    const converse = () => model.value.invoke([new HumanMessage("hi")]);
    expect((await converse()).content).toBe("hi");
    expect(await embeddings.value.embedQuery("hi")).toEqual([0.1, 0.2]);
    await converse();
    expect(paths).toEqual(["POST /model/m/converse", "POST /model/e/invoke", "POST /model/m/converse"]);
    expect(connections).toBe(1);
  });

  it("stream a reply over the same kept-alive connection, in ConverseStream's event encoding", async () => {
    const config = loadConfig({ BEDROCK_MODEL_ID: "m" });
    const { value: model } = await createChatModel(config);
    await model.invoke([new HumanMessage("hi")]);
    const before = connections;
    const streamed = async () => {
      const parts: string[] = [];
      for await (const chunk of await model.stream([new HumanMessage("hi")])) parts.push(String(chunk.content));
      return parts.join("");
    };
    expect(await streamed()).toBe("Hello");
    expect(await streamed()).toBe("Hello");
    expect(paths.slice(-2)).toEqual(["POST /model/m/converse-stream", "POST /model/m/converse-stream"]);
    // The Converse's connection, kept alive: none opened for the streams.
    expect(connections - before).toBe(0);
  });
});
