import type { SupportRun } from "../../graph/support/run-types";
import { sharedLocalStack } from "../support/local-stack";

// The local-only route the playground's Intercom panel polls for the support agent's hops, over
// HTTP against the stack `npm start` runs: the worker's checkpoint, read back hop by hop.
const local = sharedLocalStack();
// The agent answers from the sample knowledge base, which the drop folder ingests at boot.
beforeAll(async () => {
  await local.stack.dropFolderReconciled;
  await local.stack.queues.ingest.drained(60_000);
}, 60_000);

const get = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${local.stack.url}${path}`, init);
  return { status: res.status, body: (await res.json()) as any };
};
const runPath = (conversationId: string) => `/_local/intercom/conversations/${conversationId}/run`;
const run = async (conversationId: string) =>
  (await get(runPath(conversationId))) as { status: number; body: SupportRun };

/** A customer writing in as the playground does: the stand-in's conversation, then the signed webhook. */
async function writeIn(body: string): Promise<string> {
  const res = await fetch(`${local.stack.url}/_local/intercom/customer`, {
    method: "POST",
    body: JSON.stringify({ email: "ann@example.com", body }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { conversation_id: string }).conversation_id;
}

describe("GET /_local/intercom/conversations/{id}/run", () => {
  it("returns the hops of an answered conversation: the plan's calls, what they gathered, the coverage", async () => {
    const id = await writeIn("How much does the Pro plan cost?");
    await local.stack.queues.support.drained();
    const { status, body } = await run(id);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      conversation_id: id,
      status: "ended",
      next: [],
      response_delivery: "sent",
      validate: { valid: true },
      escalate: null,
      error: null,
    });
    expect(body.finalize?.snoozed_until).toEqual(expect.any(String));
    expect(Date.parse(body.updated_at!)).not.toBeNaN();
    expect(body.hops).toHaveLength(1);
    const [hop] = body.hops;
    expect(hop).toMatchObject({ part_id: body.part_id, number: 1 });
    expect(hop!.plan.reasoning).toEqual(expect.any(String));
    expect(hop!.plan.tool_calls.map((c) => c.tool_name)).toContain("search_knowledge_base");
    const search = hop!.gather.tool_results.find((r) => r.tool_name === "search_knowledge_base");
    expect(search).toMatchObject({ success: true, error: null, execution_time_ms: expect.any(Number) });
    expect(JSON.stringify(search!.data)).toContain("pricing.md");
    expect(hop!.coverage).toMatchObject({ data_sufficient: true, missing_data: [] });
    expect(hop!.coverage.coverage_score).toBeGreaterThan(0);
  }, 30_000);

  it("returns every hop of an escalated conversation with what each found missing", async () => {
    const id = await writeIn("Can I pay with bitcoin or another cryptocurrency?");
    await local.stack.queues.support.drained();
    const { body } = await run(id);
    expect(body).toMatchObject({ status: "ended", response_delivery: "escalated", validate: null });
    expect(body.escalate?.reason).toMatch(/after 2 hops/);
    expect(body.hops.map((h) => h.number)).toEqual([1, 2]);
    for (const hop of body.hops) {
      expect(hop.coverage.data_sufficient).toBe(false);
      expect(hop.coverage.missing_data.length).toBeGreaterThan(0);
    }
  }, 30_000);

  it("answers a conversation no worker has started on as waiting, with no hops", async () => {
    // The stand-in's own route creates the conversation without notifying the webhook.
    const created = await fetch(`${local.stack.url}/_local/intercom/conversations`, {
      method: "POST",
      body: JSON.stringify({ email: "ann@example.com", body: "hello?" }),
    });
    const { conversation_id } = (await created.json()) as { conversation_id: string };
    const { status, body } = await run(conversation_id);
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "waiting", hops: [], part_id: null, updated_at: null, next: [] });
  });

  it("answers an unknown conversation with a 404 and a malformed id with a 400, in the API's error shape", async () => {
    expect(await get(runPath("987654321"))).toEqual({
      status: 404,
      body: { error: { code: "conversation_not_found", message: expect.stringContaining("987654321") } },
    });
    for (const bad of ["abc", "12%2F3", "%zz", "1".repeat(33)]) {
      const { status, body } = await get(runPath(bad));
      expect([bad, status, body.error.code]).toEqual([bad, 400, "invalid_conversation_id"]);
    }
    const post = await get(runPath("1000"), { method: "POST" });
    expect([post.status, post.body.error.code]).toEqual([405, "method_not_allowed"]);
  });
});
