import { escalateNode, type SupportDeps } from "../../../graph/support/nodes";
import type { SupportStateType } from "../../../graph/support/state";

// The support agent's last resort: a part it cannot answer goes to a person, by an internal note.

const state = {
  conversation_id: "c1",
  part_id: "p1",
  escalation_reason: "the draft failed validation",
} as SupportStateType;

describe("escalating a part to the team", () => {
  it("notes the reason and goes on to the snooze", async () => {
    const notes: string[] = [];
    const deps = {
      adminId: "991",
      intercom: { reply: async (_c: string, _a: string, _t: string, body: string) => void notes.push(body) },
    };
    const update = await escalateNode(deps as unknown as SupportDeps)(state);
    expect(update).toMatchObject({ response_delivery: "escalated", next_node: "finalize" });
    expect(notes).toEqual(["Escalated to the team. Reason: the draft failed validation (from: agent)"]);
  });

  it("fails the delivery when the note cannot be posted, rather than snooze a part nobody was told of", async () => {
    const deps = {
      adminId: "991",
      intercom: {
        reply: async () => {
          throw new Error("Intercom POST /conversations/c1/reply failed with 503");
        },
      },
    };
    await expect(escalateNode(deps as unknown as SupportDeps)(state)).rejects.toThrow(
      /the note to the team could not be posted: .*503/,
    );
  });
});
