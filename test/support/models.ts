import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { RunnableLambda } from "@langchain/core/runnables";

/** A model scripted by a function of the messages it sees: for driving the graph into corners. */
export class ScriptedModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];

  constructor(private readonly script: (messages: BaseMessage[]) => AIMessage) {
    super({});
  }

  _llmType() {
    return "scripted";
  }

  override bindTools(_tools: BindToolsInput[]) {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const message = this.script(messages);
    return { generations: [{ text: String(message.content), message }] };
  }
}

/** Always asks for the same tool again: a run that never ends by itself. */
export const loopingModel = (toolName: string) =>
  new ScriptedModel(
    () => new AIMessage({ content: "", tool_calls: [{ id: `c${Math.random()}`, name: toolName, args: {} }] }),
  );

/** Fails every call with an error of the given name, as the AWS SDK names service exceptions. */
export const failingModel = (name: string) =>
  new ScriptedModel(() => {
    throw Object.assign(new Error(`${name} from the model`), { name });
  });

/**
 * A model whose structured outputs are scripted by output name (the support agent's
 * decisions): each call gets the prompt and returns the decision, or throws.
 */
export class ScriptedDecisions extends ScriptedModel {
  readonly prompts: Record<string, string[]> = {};

  constructor(private readonly decisions: Record<string, (prompt: string, call: number) => unknown>) {
    super(() => new AIMessage("unused"));
  }

  override withStructuredOutput(_schema: unknown, config?: { name?: string }): any {
    const name = config?.name ?? "extract";
    return RunnableLambda.from(async (messages: BaseMessage[]) => {
      const prompt = String(messages[messages.length - 1]!.content);
      (this.prompts[name] ??= []).push(prompt);
      const decide = this.decisions[name];
      if (!decide) throw new Error(`no scripted decision for ${name}`);
      return decide(prompt, this.prompts[name]!.length);
    });
  }
}
