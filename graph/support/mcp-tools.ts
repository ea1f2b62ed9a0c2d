import type { StructuredToolInterface } from "@langchain/core/tools";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

/** Tools the support agent can plan with beyond the registry's: those of an MCP server. */
export interface ExternalTools {
  names(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<unknown>;
}

class McpTimeout extends Error {}

export interface McpToolsOptions {
  /** how long listing the tools, or one call, may take (the SDK's own limit is 60 s) */
  timeoutMs?: number;
  /** after a failure, how long the server is skipped rather than waited on again by every run */
  pauseAfterFailureMs?: number;
}

/**
 * An MCP server's tools over Streamable HTTP (`SUPPORT_MCP_URL`), as LangChain tools through
 * `@langchain/mcp-adapters`. Loaded on first use and kept for the container's life; a failure
 * drops them so the next use connects afresh, after a pause. Each listing and call has a time
 * limit of its own: a server that takes connections and never answers would otherwise hold every
 * support run for the SDK's 60 s, half the worker's time.
 */
export class McpTools implements ExternalTools {
  private tools?: Promise<StructuredToolInterface[]>;
  private client?: MultiServerMCPClient;
  private failedAt?: number;
  private readonly timeoutMs: number;
  private readonly pauseMs: number;

  constructor(
    private readonly url: string,
    options: McpToolsOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.pauseMs = options.pauseAfterFailureMs ?? 60_000;
  }

  private load(): Promise<StructuredToolInterface[]> {
    if (this.failedAt !== undefined && Date.now() - this.failedAt < this.pauseMs)
      return Promise.reject(new Error(`MCP server ${this.url} is paused after a failure`));
    this.tools ??= this.limited("listing its tools", async () => {
      this.client = new MultiServerMCPClient({
        mcpServers: { support: { url: this.url, transport: "http" } },
        throwOnLoadError: true,
        prefixToolNameWithServerName: false,
      });
      return this.client.getTools();
    }).catch((err) => {
      this.forget();
      throw err;
    });
    return this.tools;
  }

  /** `work`, or a rejection once it has taken longer than the time limit. */
  private async limited<T>(what: string, work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new McpTimeout(`MCP server ${this.url} did not answer within ${this.timeoutMs} ms (${what})`)),
        this.timeoutMs,
      );
    });
    try {
      return await Promise.race([work(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private forget() {
    this.failedAt = Date.now();
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
      const result = await this.limited(`calling ${name}`, () => tool.invoke(args));
      return typeof result === "string" ? result : JSON.stringify(result);
    } catch (err) {
      // Only a server that stopped answering is dropped (and paused): a tool's own error answer, or
      // arguments its schema refuses, fail that one call, and the server serves the next.
      if (err instanceof McpTimeout) this.forget();
      throw new Error(`MCP tool ${name} failed: ${(err as Error).message}`.slice(0, 500), { cause: err });
    }
  }
}
