import { escalateNode, guarded, initializeNode, respondNode, type SupportDeps } from "../../../graph/support/nodes";
import type { SupportStateType } from "../../../graph/support/state";
import { IntercomClient } from "../../../shared/intercom/client";
import { recordingServer, type Reply } from "../../support/recording-server";

// A probe's findings: a short outage of Intercom handed parts to the team for good. Four 429s on
// the customer's reply (3.6 s), or 3 s of a read answering 503, ended as an escalation that no
// retry would undo; an escalation whose note could not be posted still kept the part "handed to
// the team", so the retry, with Intercom back, sent no reply and told nobody new. And a request
// Intercom never answered held the run past its deadline.

const state = {
  conversation_id: "c1",
  part_id: "p1",
  draft: { reply: "Refunds are available within 14 days. (Source: refunds.md)" },
} as SupportStateType;

let respond: () => Reply = () => ({ status: 200, body: {} });
let server: Awaited<ReturnType<typeof recordingServer>>;
beforeAll(async () => {
  server = await recordingServer(() => respond());
});
afterAll(() => server.close());

/** Markers in memory, as OnceMarkers keeps them. */
function markers() {
  const held = new Map<string, string | undefined>();
  return {
    held,
    claim: async (key: string, note?: string) => {
      if (held.has(key)) return false;
      held.set(key, note);
      return true;
    },
    claimed: async (key: string) => held.has(key),
    markOf: async (key: string) => (held.has(key) ? { note: held.get(key) } : undefined),
    release: async (key: string) => void held.delete(key),
  };
}

const depsWith = (answered = markers()) =>
  ({
    adminId: "991",
    answered,
    intercom: new IntercomClient({ baseUrl: server.url, token: "t", maxDelayMs: 5, requestTimeoutMs: 200 }),
  }) as unknown as SupportDeps & { answered: ReturnType<typeof markers> };

describe("Intercom failing for a while", () => {
  it("fails the delivery, to be retried, when a read is refused with 429 or 503 past the client's retries", async () => {
    for (const status of [429, 503]) {
      respond = () => ({ status, body: { type: "error.list" }, headers: { "retry-after": "0" } });
      await expect(guarded("initialize", initializeNode(depsWith()))(state)).rejects.toMatchObject({
        status,
        retriable: true,
      });
    }
  });

  it("fails the delivery and gives the part back when the customer's reply is refused with 429", async () => {
    respond = () => ({ status: 429, body: { type: "error.list" }, headers: { "retry-after": "0" } });
    const deps = depsWith();
    await expect(guarded("respond", respondNode(deps))(state)).rejects.toMatchObject({ status: 429 });
    expect([...deps.answered.held.keys()]).toEqual([]);
    // The retry, with Intercom back, sends the reply once.
    respond = () => ({ status: 200, body: {} });
    await expect(guarded("respond", respondNode(deps))(state)).resolves.toMatchObject({ response_delivery: "sent" });
  });

  it("still hands the part to the team when the customer's reply may have landed (a 5xx)", async () => {
    respond = () => ({ status: 502, body: { type: "error.list" } });
    await expect(guarded("respond", respondNode(depsWith()))(state)).resolves.toMatchObject({
      next_node: "escalate",
      escalation_reason: "the respond step failed",
    });
  });

  it("keeps no hand-off to the team whose note Intercom refused (429): the retry answers the part", async () => {
    respond = () => ({ status: 429, body: { type: "error.list" }, headers: { "retry-after": "0" } });
    const deps = depsWith();
    await expect(escalateNode(deps)({ ...state, escalation_reason: "a step failed" })).rejects.toThrow(
      /the note to the team could not be posted/,
    );
    expect([...deps.answered.held.keys()]).toEqual([]);
    respond = () => ({ status: 200, body: {} });
    await expect(guarded("respond", respondNode(deps))(state)).resolves.toMatchObject({ response_delivery: "sent" });
  });

  // A review's finding: a note answered 5xx (or not at all) may have been posted, as notes are
  // tried again on those; giving the hand-off back let the retry reply beside the team's note.
  it("keeps the hand-off when the note may have been posted (a 5xx): the retry notes the team again, no reply", async () => {
    respond = () => ({ status: 503, body: { type: "error.list" } });
    const deps = depsWith();
    await expect(escalateNode(deps)({ ...state, escalation_reason: "a step failed" })).rejects.toThrow(
      /the note to the team could not be posted/,
    );
    expect([...deps.answered.held.keys()]).toEqual(["intercom-answered#c1#p1#escalated"]);
    respond = () => ({ status: 200, body: {} });
    await expect(guarded("respond", respondNode(deps))(state)).resolves.toMatchObject({ next_node: "escalate" });
  });

  it("stops a request the run's signal stops, however long Intercom keeps it", async () => {
    respond = () => ({ status: 200, hang: true });
    const slow = {
      ...depsWith(),
      intercom: new IntercomClient({ baseUrl: server.url, token: "t", maxDelayMs: 5, requestTimeoutMs: 60_000 }),
    } as unknown as SupportDeps;
    const started = Date.now();
    await expect(initializeNode(slow)(state, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
