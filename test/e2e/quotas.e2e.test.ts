import { freshUser, localStackForTests } from "../support/local-stack";

// Quotas over HTTP on the stack `npm start` runs, with USER_QUOTAS set: the turn over the limit is
// 429 quota_exceeded with the limit and Retry-After on every way in (chat, stream, an Agent Server
// run), another user is unaffected, and GET /api/me/usage shows the day against the limits.
const holder = localStackForTests("quotas-e2e", {
  USER_QUOTAS: JSON.stringify({
    turnsPerMinute: 2,
    tokensPerDay: 1_000_000,
    projects: { pro: { turnsPerMinute: 50 } },
  }),
  OFFLINE_STREAM_DELAY_MS: "0",
});

async function post(path: string, user: string, body: unknown) {
  const res = await fetch(`${holder.stack.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-user-id": user },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

describe("per-user quotas over HTTP", () => {
  it("refuses the turn over the per-minute limit with 429, the limit and Retry-After, on every way in", async () => {
    // Two turns fit a minute: started right after a minute begins, so the test cannot straddle one.
    const wait = 60_000 - (Date.now() % 60_000);
    if (wait < 15_000) await new Promise((r) => setTimeout(r, wait + 50));
    const user = freshUser("quinn");
    expect((await post("/api/chat", user, { message: "hello" })).status).toBe(200);
    expect((await post("/api/chat", user, { message: "hello again" })).status).toBe(200);

    const refused = await post("/api/chat", user, { message: "one more" });
    expect(refused.status).toBe(429);
    expect(refused.json().error).toMatchObject({ code: "quota_exceeded", limit: "turnsPerMinute", value: 2 });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const streamed = await post("/api/chat/stream", user, { message: "one more, streamed" });
    expect(streamed.status).toBe(429);
    expect(streamed.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(streamed.json().error.code).toBe("quota_exceeded");

    const run = await post("/runs/wait", user, {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "and an Agent Server run" }] },
    });
    expect(run.status).toBe(429);
    expect(run.headers.get("retry-after")).toMatch(/^\d+$/);
    // The Agent Server's body says which limit as the chat routes' does, beside LangGraph's `detail`,
    // and the wait its own header says (a second may have passed since the chat's answer).
    const runRetryAfter = Number(run.headers.get("retry-after"));
    expect(runRetryAfter).toBeLessThanOrEqual(retryAfter);
    expect(runRetryAfter).toBeGreaterThanOrEqual(retryAfter - 1);
    expect(run.json()).toMatchObject({
      detail: expect.stringContaining("limit"),
      error: { code: "quota_exceeded", limit: "turnsPerMinute", value: 2, retry_after_seconds: runRetryAfter },
    });

    expect((await post("/api/chat", freshUser("rae"), { message: "hi" })).status).toBe(200);
    // A project with quotas of its own counts apart: the same user's turn there is admitted.
    expect((await post("/api/chat", user, { message: "in the pro project", project_id: "pro" })).status).toBe(200);

    const usage = await fetch(`${holder.stack.url}/api/me/usage`, { headers: { "x-user-id": user } });
    expect(await usage.json()).toMatchObject({
      turns: 2,
      turns_this_minute: 2,
      tokens: expect.any(Number),
      limits: { turns_per_minute: 2, tokens_per_day: 1_000_000 },
      projects: { pro: { turns: 1, limits: { turns_per_minute: 50, tokens_per_day: 1_000_000 } } },
      counted: true,
    });

    // Erasing one's data does not reset one's limits: the counters outlive it (under a hash of the id).
    const erased = await fetch(`${holder.stack.url}/api/me`, { method: "DELETE", headers: { "x-user-id": user } });
    expect(erased.status).toBe(200);
    expect((await post("/api/chat", user, { message: "after erasing" })).status).toBe(429);
  }, 90_000);

  // The eleventh part's leftover: memory extraction's model call (another function, after the
  // reply) is the user's cost too, and did not count toward tokensPerDay. A second turn of a
  // session, so no naming call counts beside it (a review: the first version's turn started a
  // session, and its naming tokens alone passed the test).
  it("counts memory extraction's model tokens toward the day's, beside the turn's own", async () => {
    const user = freshUser("uma");
    const first = await post("/api/chat", user, { message: "hello" });
    const sessionId = first.json().session_id as string;
    await holder.stack.queues.extraction.drained();
    const tokensNow = async () =>
      (
        (await (await fetch(`${holder.stack.url}/api/me/usage`, { headers: { "x-user-id": user } })).json()) as {
          tokens: number;
        }
      ).tokens;
    const before = await tokensNow();
    const reply = await post("/api/chat", user, {
      message: "Remember that I prefer aisle seats",
      session_id: sessionId,
    });
    expect(reply.status).toBe(200);
    await holder.stack.queues.extraction.drained();
    const res = await fetch(`${holder.stack.url}/api/sessions/${sessionId}/messages?trace=1`, {
      headers: { "x-user-id": user },
    });
    const messages = (await res.json()) as { role: string; trace?: { usage?: { total_tokens?: number } }[] }[];
    const turnTokens = (messages.at(-1)!.trace ?? []).reduce((n, step) => n + (step.usage?.total_tokens ?? 0), 0);
    expect(turnTokens).toBeGreaterThan(0);
    const memories = await fetch(`${holder.stack.url}/api/memories`, { headers: { "x-user-id": user } });
    expect(((await memories.json()) as { memories: unknown[] }).memories).toHaveLength(1);
    // The turn's tokens, and the extraction's beside them.
    expect((await tokensNow()) - before).toBeGreaterThan(turnTokens);
  });
});
