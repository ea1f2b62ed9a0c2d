import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { deepCopy } from "../../../graph/checkpoint/deep-copy";

describe("deepCopy", () => {
  it("copies a LangChain message into an independent instance of the same class", () => {
    const message = new AIMessage({
      id: "m1",
      content: [{ type: "text", text: "hi" }],
      tool_calls: [{ id: "c1", name: "search", args: { q: "refund" } }],
      response_metadata: { at: new Date(0), raw: new Uint8Array([1, 2]) },
    });
    const copy = deepCopy(message);
    expect(copy).toBeInstanceOf(AIMessage);
    expect(copy).not.toBe(message);
    expect(copy.tool_calls).toEqual(message.tool_calls);
    expect(copy.response_metadata.at).toEqual(new Date(0));
    (copy.content as { text: string }[])[0]!.text = "changed";
    copy.tool_calls![0]!.args.q = "changed";
    (copy.response_metadata.raw as Uint8Array)[0] = 9;
    expect(message.content).toEqual([{ type: "text", text: "hi" }]);
    expect(message.tool_calls![0]!.args.q).toBe("refund");
    expect(message.response_metadata.raw).toEqual(new Uint8Array([1, 2]));
    expect(copy.text).toBe("changed");
  });

  it("keeps shared and cyclic references as they were", () => {
    const shared = { n: 1 };
    const value: Record<string, unknown> = {
      a: shared,
      b: shared,
      list: [new ToolMessage({ content: "x", tool_call_id: "c" })],
    };
    value.self = value;
    const copy = deepCopy(value);
    expect(copy.a).toBe(copy.b);
    expect(copy.a).not.toBe(shared);
    expect(copy.self).toBe(copy);
    expect((copy.list as unknown[])[0]).toBeInstanceOf(ToolMessage);
  });
});
