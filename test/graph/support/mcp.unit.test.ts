import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as z from "zod";
import { McpTools } from "../../../graph/support/mcp-tools";

// A real MCP server (the official SDK's) on loopback, stateless Streamable HTTP.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer(async (req, res) => {
    const mcp = new McpServer({ name: "orders", version: "1.0.0" });
    mcp.registerTool(
      "get_order_status",
      { description: "Status of an order", inputSchema: { order_id: z.string() } },
      async ({ order_id }) => ({ content: [{ type: "text", text: `order ${order_id} shipped on Monday` }] }),
    );
    mcp.registerTool("always_fails", { description: "fails" }, async () => ({
      content: [{ type: "text", text: "boom" }],
      isError: true,
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(() => server.close());

describe("MCP tools for the support agent", () => {
  it("lists and calls a server's tools", async () => {
    const tools = new McpTools(url);
    expect(await tools.names()).toEqual(["get_order_status", "always_fails"]);
    expect(await tools.call("get_order_status", { order_id: "A-17" })).toBe("order A-17 shipped on Monday");
  });

  it("reports a tool's error result as a failure, and serves the next call", async () => {
    const tools = new McpTools(url);
    await expect(tools.call("always_fails", {})).rejects.toThrow(/MCP tool always_fails failed/);
    // Arguments the tool's schema refuses fail that call alone too.
    await expect(tools.call("get_order_status", { order_id: 17 })).rejects.toThrow(/MCP tool get_order_status failed/);
    expect(await tools.call("get_order_status", { order_id: "A-17" })).toBe("order A-17 shipped on Monday");
  });

  it("fails clearly when the server is not there", async () => {
    const tools = new McpTools("http://127.0.0.1:9/mcp");
    await expect(tools.names()).rejects.toThrow();
  });

  // A server that takes connections and never answers: the SDK's own timeout is 60 s, half the
  // support worker's, and every run would wait it out again.
  it("gives up on a server that never answers within its time limit, and skips it a while after", async () => {
    let connections = 0;
    const silent = createServer(() => void connections++);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    try {
      const tools = new McpTools(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, {
        timeoutMs: 300,
        pauseAfterFailureMs: 60_000,
      });
      const started = Date.now();
      await expect(tools.names()).rejects.toThrow(/did not answer within 300 ms/);
      expect(Date.now() - started).toBeLessThan(5_000);
      const seen = connections;
      await expect(tools.names()).rejects.toThrow(/paused after a failure/);
      expect(connections).toBe(seen);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
