import { escalateNode, type SupportDeps } from "../../../graph/support/nodes";
import { IntercomError } from "../../../shared/intercom/client";
import type { SupportStateType } from "../../../graph/support/state";

// The support agent's last resort: a part it cannot answer goes to a person, by an internal note.

const state = {
  conversation_id: "c1",
  part_id: "p1",
  escalation_reason: "the draft failed validation",
} as SupportStateType;

describe("escalating a part to the team", () => {
  it("notes the reason, marks the part as the team's, and goes on to finish", async () => {
    const notes: string[] = [];
    const marks: string[] = [];
    const deps = {
      adminId: "991",
      answered: { claim: async (key: string) => marks.push(key) > 0 },
      intercom: { reply: async (_c: string, _a: string, _t: string, body: string) => void notes.push(body) },
    };
    const update = await escalateNode(deps as unknown as SupportDeps)(state);
    expect(update).toMatchObject({ response_delivery: "escalated", next_node: "finalize" });
    expect(notes).toEqual(["Escalated to the team. Reason: the draft failed validation (from: agent)"]);
    // Marked before the note: a later attempt at the part sends no reply beside the person's.
    expect(marks).toEqual(["intercom-answered#c1#p1#escalated"]);
  });

  it("fails the delivery when the note cannot be posted, rather than snooze a part nobody was told of", async () => {
    const deps = {
      adminId: "991",
      answered: { claim: async () => true, release: async () => undefined },
      intercom: {
        reply: async () => {
          throw new IntercomError(503, "Intercom POST /conversations/c1/reply failed with 503");
        },
      },
    };
    await expect(escalateNode(deps as unknown as SupportDeps)(state)).rejects.toThrow(
      /the note to the team could not be posted: .*503/,
    );
  });

  it("records a note Intercom refuses for good (the conversation is gone), since no retry would help", async () => {
    const deps = {
      adminId: "991",
      answered: { claim: async () => true },
      intercom: {
        reply: async () => {
          throw new IntercomError(404, "Intercom POST /conversations/c1/reply failed with 404");
        },
      },
    };
    await expect(escalateNode(deps as unknown as SupportDeps)(state)).resolves.toMatchObject({
      error: expect.stringMatching(/^escalate: .*404/),
      response_delivery: "escalated",
    });
  });

  // A revoked or rotated token refuses every call: read as "the conversation is gone", every
  // message would be dropped without a word for as long as it lasted.
  it.each([401, 403])(
    "fails the delivery when Intercom refuses the note with %i, to be retried and dead-lettered",
    async (status) => {
      const marks: string[] = [];
      const deps = {
        adminId: "991",
        answered: { claim: async (key: string) => marks.push(key) > 0, release: async () => undefined },
        intercom: {
          reply: async () => {
            throw new IntercomError(status, `Intercom POST /conversations/c1/reply failed with ${status}`);
          },
        },
      };
      await expect(escalateNode(deps as unknown as SupportDeps)(state)).rejects.toThrow(
        new RegExp(`the note to the team could not be posted: .*${status}`),
      );
    },
  );
});
