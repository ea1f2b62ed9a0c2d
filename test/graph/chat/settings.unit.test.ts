import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import * as z from "zod";
import { buildChatGraph } from "../../../graph/chat/graph";
import { switchMetadata, type ToolSwitch } from "../../../graph/tools/groups";
import { DEFAULT_SETTINGS, type SessionSettings } from "../../../shared/session-settings";
import { ScriptedModel } from "../../support/models";

// Which tools a model call is bound and told about follows the session's settings.

/** A scripted model that records, per call, the tools it was bound with. */
class BindingModel extends ScriptedModel {
  readonly boundPerCall: string[][] = [];
  override bindTools(tools: BindToolsInput[]) {
    const names = tools.map((t) => (t as { name: string }).name);
    return RunnableLambda.from(async (messages: BaseMessage[], config) => {
      this.boundPerCall.push(names);
      return this.invoke(messages, config);
    }) as never;
  }
}

const ran: string[] = [];
const fake = (name: string, s: ToolSwitch) =>
  tool(
    async () => {
      ran.push(name);
      return JSON.stringify({ success: true });
    },
    { name, description: `the ${name} tool`, schema: z.object({}), metadata: switchMetadata(s) },
  );
const TOOLS = [
  fake("store_memory", { group: "memory", writesMemory: true }),
  fake("recall_memory", { group: "memory" }),
  fake("search_knowledge_base", { group: "knowledge" }),
  fake("get_current_time", { group: "user_context" }),
];

/** Calls `toolName` once, then answers. */
const callsOnce = (toolName: string) =>
  new BindingModel((messages) =>
    messages.some((m) => m instanceof ToolMessage)
      ? new AIMessage("done")
      : new AIMessage({ content: "", tool_calls: [{ id: "c1", name: toolName, args: {} }] }),
  );

async function turn(model: BindingModel, settings: Partial<SessionSettings>, toolCalling = true) {
  const graph = buildChatGraph({ model, tools: TOOLS, checkpointer: new MemorySaver(), toolCalling });
  const out = await graph.invoke(
    { messages: [new HumanMessage("hi")] },
    { configurable: { thread_id: `t${Math.random()}`, user_id: "u", settings: { ...DEFAULT_SETTINGS, ...settings } } },
  );
  return out.messages as BaseMessage[];
}

const systemOf = (model: ScriptedModel) => String(model.seen[0]![0]!.content);

beforeEach(() => {
  ran.length = 0;
});

describe("the chat graph under session settings", () => {
  it("binds and describes only the enabled groups' tools", async () => {
    const model = callsOnce("get_current_time");
    await turn(model, { memory: false });
    expect(model.boundPerCall[0]).toEqual(["search_knowledge_base", "get_current_time"]);
    expect(systemOf(model)).not.toMatch(/recall_memory|store_memory/);
    expect(systemOf(model)).toMatch(/search_knowledge_base/);
  });

  it("offers a private session recall but never store_memory, and says nothing is remembered", async () => {
    const model = callsOnce("get_current_time");
    await turn(model, { private: true });
    expect(model.boundPerCall[0]).toEqual(["recall_memory", "search_knowledge_base", "get_current_time"]);
    expect(systemOf(model)).toMatch(/Nothing from this session is remembered/);
  });

  it("answers a call of a tool that is off with success:false and guidance, without running it", async () => {
    const messages = await turn(callsOnce("store_memory"), { memory: false });
    const result = messages.find((m) => m instanceof ToolMessage)!;
    expect(ran).toEqual([]);
    expect(JSON.parse(String(result.content))).toEqual({
      success: false,
      error: expect.stringMatching(/store_memory is turned off in this session .*"memory" on/),
    });
    const privateRun = await turn(callsOnce("store_memory"), { private: true });
    expect(String(privateRun.find((m) => m instanceof ToolMessage)!.content)).toMatch(/private session/);
    expect(ran).toEqual([]);
    // On: the same call runs.
    await turn(callsOnce("store_memory"), {});
    expect(ran).toEqual(["store_memory"]);
  });

  it("binds nothing for a model declared without tool support, and its prompt says so", async () => {
    const model = new BindingModel(() => new AIMessage("plain"));
    await turn(model, {}, false);
    expect(model.boundPerCall).toEqual([]);
    expect(systemOf(model)).toMatch(/You have no tools/);
  });
});
