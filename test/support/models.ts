import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

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
