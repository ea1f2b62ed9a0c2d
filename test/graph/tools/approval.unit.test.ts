import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import {
  applyDecisions,
  ApproveTools,
  approvalRequest,
  combinedApproval,
  decisionsFor,
  needsApproval,
} from "../../../graph/tools/approval";

const calls = [
  { id: "c1", name: "store_memory", args: { content: "My cat is Tom" }, type: "tool_call" as const },
  { id: "c2", name: "recall_memory", args: { query: "cat" }, type: "tool_call" as const },
];
const message = new AIMessage({ id: "ai-1", content: "", tool_calls: calls });

describe("tools that wait for approval", () => {
  it("reads which tools from the run's configuration: names, every one, or none", () => {
    expect(needsApproval({ configurable: { approve_tools: ["store_memory"] } })("store_memory")).toBe(true);
    expect(needsApproval({ configurable: { approve_tools: ["store_memory"] } })("recall_memory")).toBe(false);
    expect(needsApproval({ configurable: { approve_tools: "*" } })("anything")).toBe(true);
    expect(needsApproval({ configurable: {} })("store_memory")).toBe(false);
    // Anything else is no approval asked, never a crash.
    expect(needsApproval({ configurable: { approve_tools: 42 } })("store_memory")).toBe(false);
  });

  it('reads "*" in a list of names as every tool, as "*" alone is (it was a tool named "*", so nothing waited)', () => {
    expect(needsApproval({ configurable: { approve_tools: ["*"] } })("store_memory")).toBe(true);
    expect(needsApproval({ configurable: { approve_tools: ["recall_memory", "*"] } })("store_memory")).toBe(true);
    expect(combinedApproval(["store_memory"], ["*"])).toBe("*");
    expect(ApproveTools.parse(["recall_memory", "*"])).toBe("*");
  });

  it("combines the session's, the assistant's and the run's: any of them counts", () => {
    expect(combinedApproval(["store_memory"], undefined, ["recall_memory", "store_memory"])).toEqual([
      "store_memory",
      "recall_memory",
    ]);
    expect(combinedApproval(["store_memory"], "*")).toBe("*");
    expect(combinedApproval(undefined, [], "nonsense")).toBeUndefined();
  });

  it("asks in humanInTheLoopMiddleware's format, one request and one review per call", () => {
    const request = approvalRequest(calls);
    expect(request.action_requests.map((a) => [a.name, a.args])).toEqual(calls.map((c) => [c.name, c.args]));
    expect(request.review_configs).toEqual([
      { action_name: "store_memory", allowed_decisions: ["approve", "edit", "reject"] },
      { action_name: "recall_memory", allowed_decisions: ["approve", "edit", "reject"] },
    ]);
  });

  it("takes one decision per call, in order, an edit keeping its tool; anything else says why", () => {
    expect(decisionsFor(calls, { decisions: [{ type: "approve" }, { type: "reject" }] })).toEqual([
      { type: "approve" },
      { type: "reject" },
    ]);
    expect(decisionsFor(calls, { decisions: [{ type: "approve" }] })).toMatch(/1 decisions for 2 tool calls/);
    expect(decisionsFor(calls, "yes")).toMatch(/not a decision list/);
    expect(
      decisionsFor(calls, {
        decisions: [{ type: "edit", edited_action: { name: "delete_everything", args: {} } }, { type: "approve" }],
      }),
    ).toMatch(/into another tool/);
  });

  it("applies them: an edit rewrites the call in the same message, a rejection answers it unrun", () => {
    const applied = applyDecisions(message, calls, [
      { type: "edit", edited_action: { name: "store_memory", args: { content: "My cat is Felix" } } },
      { type: "reject", message: "not that" },
    ]);
    expect(applied.edited).toBe(true);
    expect(applied.message.id).toBe("ai-1");
    expect(applied.message.tool_calls?.map((c) => c.args)).toEqual([{ content: "My cat is Felix" }, { query: "cat" }]);
    expect(applied.rejections).toHaveLength(1);
    const rejection = applied.rejections[0] as ToolMessage;
    expect(rejection.tool_call_id).toBe("c2");
    expect(rejection.status).toBe("error");
    expect(String(rejection.content)).toContain("not that");

    const approved = applyDecisions(message, calls, [{ type: "approve" }, { type: "approve" }]);
    expect(approved).toEqual({ message, edited: false, rejections: [] });
  });
});
