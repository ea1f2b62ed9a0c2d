import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Tools the support agent can plan with beyond its own: those of an MCP server. */
export interface ExternalTools {
  names(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<unknown>;
}

/**
 * An MCP server's tools over Streamable HTTP (`SUPPORT_MCP_URL`), through the official SDK's
 * client. Connected on first use and kept for the container's life; a failed call drops the
 * connection so the next one starts afresh.
 */
export class McpTools implements ExternalTools {
  private client?: Promise<Client>;

  constructor(private readonly url: string) {}

  private connect(): Promise<Client> {
    this.client ??= (async () => {
      const client = new Client({ name: "support-agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(this.url)));
      return client;
    })().catch((err) => {
      this.client = undefined;
      throw err;
    });
    return this.client;
  }

  async names(): Promise<string[]> {
    try {
      const { tools } = await (await this.connect()).listTools();
      return tools.map((t) => t.name);
    } catch (err) {
      this.client = undefined;
      throw err;
    }
  }

  async call(name: string, args: Record<string, unknown>): Promise<unknown> {
    try {
      const result = await (await this.connect()).callTool({ name, arguments: args });
      if (result.isError) throw new Error(`MCP tool ${name} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
      const content = (result.content ?? []) as { type: string; text?: string }[];
      return content.map((c) => (c.type === "text" ? c.text : c)).join("\n");
    } catch (err) {
      this.client = undefined;
      throw err;
    }
  }
}
