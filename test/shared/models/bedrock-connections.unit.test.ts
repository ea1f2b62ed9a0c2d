import { ConverseCommand, InvokeModelCommand } from "@aws-sdk/client-bedrock-runtime";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../shared/config";
import { bedrockClient } from "../../../shared/models/bedrock-client";

// Bedrock cannot run here: a local endpoint answering Converse and InvokeModel in the shapes AWS
// documents, counting the connections the client opens to it.
let server: Server;
let connections = 0;
const paths: string[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    req.resume().on("end", () => {
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
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_REGION: "us-east-1",
  });
});
afterAll(async () => {
  process.env = saved;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the Bedrock client", () => {
  it("keeps one connection for a container's consecutive model calls and embeddings", async () => {
    const client = bedrockClient(loadConfig({}));
    const converse = () =>
      client.send(new ConverseCommand({ modelId: "m", messages: [{ role: "user", content: [{ text: "hi" }] }] }));
    const embed = () =>
      client.send(
        new InvokeModelCommand({
          modelId: "e",
          body: JSON.stringify({ inputText: "hi" }),
          contentType: "application/json",
        }),
      );
    expect((await converse()).output?.message?.content).toEqual([{ text: "hi" }]);
    await embed();
    await converse();
    expect(paths).toEqual(["POST /model/m/converse", "POST /model/e/invoke", "POST /model/m/converse"]);
    expect(connections).toBe(1);
    client.destroy();
  });
});
