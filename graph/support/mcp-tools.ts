import type { StructuredToolInterface } from "@langchain/core/tools";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

/** Tools the support agent can plan with beyond the registry's: those of an MCP server. */
export interface ExternalTools {
  names(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<unknown>;
}

/**
 * An MCP server's tools over Streamable HTTP (`SUPPORT_MCP_URL`), as LangChain tools through
 * `@langchain/mcp-adapters`. Loaded on first use and kept for the container's life; a failure
 * drops them so the next use connects afresh.
 */
export class McpTools implements ExternalTools {
  private tools?: Promise<StructuredToolInterface[]>;
  private client?: MultiServerMCPClient;

  constructor(private readonly url: string) {}

  private load(): Promise<StructuredToolInterface[]> {
    this.tools ??= (async () => {
      this.client = new MultiServerMCPClient({
        mcpServers: { support: { url: this.url, transport: "http" } },
        throwOnLoadError: true,
        prefixToolNameWithServerName: false,
      });
      return this.client.getTools();
    })().catch((err) => {
      this.forget();
      throw err;
    });
    return this.tools;
  }

  private forget() {
    this.tools = undefined;
    void this.client?.close().catch(() => {});
    this.client = undefined;
  }

  async names(): Promise<string[]> {
    return (await this.load()).map((t) => t.name);
  }

  async call(name: string, args: Record<string, unknown>): Promise<unknown> {
    const tool = (await this.load()).find((t) => t.name === name);
    if (!tool) throw new Error(`MCP tool ${name} is not offered by ${this.url}`);
    try {
      const result = await tool.invoke(args);
      return typeof result === "string" ? result : JSON.stringify(result);
    } catch (err) {
      this.forget();
      throw new Error(`MCP tool ${name} failed: ${(err as Error).message}`.slice(0, 500), { cause: err });
    }
  }
}
