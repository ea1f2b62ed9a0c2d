import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import type { BaseMessage } from "@langchain/core/messages";
import { buildChatGraph } from "../../../graph/chat/graph";
import { ChatService } from "../../../graph/chat/service";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import type { UserQuotas } from "../../../shared/quotas";
import { UserUsage } from "../../../shared/stores/user-usage";
import { refusal } from "../../support/refusal";
import { meteredBackends } from "../../support/metered-backends";

// Per-user quotas (USER_QUOTAS) on the chat turn, with the clock injected: the turn over a limit is
// refused with 429 before the model is called, another user is unaffected, and the next window
// admits again. The offline stand-in model reports token usage as Bedrock does.

const stack = meteredBackends();

/** A model that counts its calls, so "before any model call" is observed, not assumed. */
class CountingModel extends OfflineChatModel {
  calls = 0;
  override async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]) {
    this.calls += 1;
    return super._generate(messages, options);
  }
}

async function service(quotas: UserQuotas, clock: { now: number }) {
  const { checkpointer, owners, tableName } = await stack.harness.stateTables();
  const model = new CountingModel();
  const graph = buildChatGraph({ model, tools: [], checkpointer });
  const usage = new UserUsage(stack.harness.dynamo.client, tableName, quotas, () => clock.now);
  const chat = new ChatService({
    graph,
    owners,
    conversations: stack.harness.conversations,
    recursionLimit: 12,
    usage,
  });
  return { chat, usage, model, tableName };
}

const START = Date.UTC(2026, 10, 23, 10, 0, 15);

describe("per-user quotas on chat turns", () => {
  // A probe's finding: a request refused after it was counted (a run with nothing to run, a
  // checkpoint not in the thread) used up the minute's turns, against "a rejected request writes
  // nothing"; three bad requests spent a limit of 3 without a model call.
  it("gives a refused request's count back, in the same request that gives back its reservation", async () => {
    const clock = { now: START };
    const { chat, usage } = await service({ turnsPerMinute: 2, tokensPerDay: 100_000 }, clock);
    const { sessionId } = await chat.reply({ userId: "cy", message: "hello" });
    clock.now += 60_000;
    for (let i = 0; i < 3; i++) {
      stack.meter.reset();
      // A new session's run is checked before anything is written: no request at all (it made a
      // session record, counted the turn and gave back its reservation before).
      expect((await refusal(chat.run({ userId: "cy" }))).code).toBe("nothing_to_run");
      expect(stack.meter.byCommand).toEqual({});
      stack.meter.reset();
      const refused = await refusal(chat.run({ userId: "cy", sessionId, options: { checkpointId: "nope" } }));
      expect(refused.code).toBe("checkpoint_not_found");
      // Counted, then given back whole with the release: the session read with its state, the
      // lease with the count (one transaction), the named checkpoint's reads (in its layout, then
      // the legacy one), and the release with the refund (one transaction).
      expect(stack.meter.byCommand).toEqual({ QueryCommand: 3, TransactWriteItemsCommand: 2 });
    }
    const before = await usage.today("cy");
    expect(before).toMatchObject({ turns: 1, turnsThisMinute: 0 });
    await chat.reply({ userId: "cy", sessionId, message: "now" });
    await chat.reply({ userId: "cy", sessionId, message: "and now" });
    expect(await usage.today("cy")).toMatchObject({ turns: 3, turnsThisMinute: 2 });
    expect((await refusal(chat.reply({ userId: "cy", sessionId, message: "one more" }))).status).toBe(429);
  });

  it("refuses the turn over the per-minute limit with 429, the limit and Retry-After, before any model call", async () => {
    const clock = { now: START };
    const { chat, model } = await service({ turnsPerMinute: 2 }, clock);
    const { sessionId } = await chat.reply({ userId: "ann", message: "hello" });
    await chat.reply({ userId: "ann", sessionId, message: "again" });
    const calls = model.calls;
    expect(calls).toBeGreaterThan(0);
    const err = await refusal(chat.reply({ userId: "ann", sessionId, message: "one more" }));
    expect(err.status).toBe(429);
    expect(err.code).toBe("quota_exceeded");
    expect(err.details).toMatchObject({ limit: "turnsPerMinute", value: 2, retry_after_seconds: 45 });
    expect(err.headers).toEqual({ "retry-after": "45" });
    expect(model.calls).toBe(calls);
    // A new session is no way around it: the count is the user's, not the session's.
    expect((await refusal(chat.reply({ userId: "ann", message: "new session" }))).status).toBe(429);
    // Another user is unaffected.
    await expect(chat.reply({ userId: "bob", message: "hi" })).resolves.toMatchObject({ reply: expect.any(String) });
    // The next minute admits again.
    clock.now = START + 45_000;
    await expect(chat.reply({ userId: "ann", sessionId, message: "next minute" })).resolves.toMatchObject({
      sessionId,
    });
  });

  it("refuses once the day's tokens are spent, until the next UTC day", async () => {
    const clock = { now: START };
    const { chat, usage } = await service({ tokensPerDay: 50 }, clock);
    const { sessionId } = await chat.reply({ userId: "cy", message: "hello, tell me something about the weather" });
    const spent = await usage.today("cy");
    expect(spent.turns).toBe(1);
    expect(spent.tokens).toBeGreaterThan(0);
    while ((await usage.today("cy")).tokens < 50) await chat.reply({ userId: "cy", sessionId, message: "and more" });
    const err = await refusal(chat.reply({ userId: "cy", sessionId, message: "over" }));
    expect(err.details).toMatchObject({ limit: "tokensPerDay", value: 50 });
    // 10:00:15 UTC: the day starts again in 13 h 59 min 45 s.
    expect(err.headers?.["retry-after"]).toBe(String(14 * 3600 - 15));
    clock.now = Date.UTC(2026, 10, 24, 0, 0, 1);
    await expect(chat.reply({ userId: "cy", sessionId, message: "a new day" })).resolves.toBeDefined();
    expect(await usage.today("cy")).toMatchObject({ day: "2026-11-24", turns: 1 });
  });

  it("counts the same when many turns arrive at once: never more admitted than the limit", async () => {
    const clock = { now: START };
    const { chat } = await service({ turnsPerMinute: 3 }, clock);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => chat.reply({ userId: "dee", message: `parallel ${i}` })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    for (const r of results.filter((r) => r.status === "rejected"))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 429 });
  });

  it("lets no more turns at once spend the day's tokens than their reservations fit under the limit", async () => {
    const clock = { now: START };
    const { chat, usage } = await service({ tokensPerDay: 5000 }, clock);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => chat.reply({ userId: "dot", message: `parallel question ${i}` })),
    );
    // Each admitted turn holds 2,048 tokens (at least; later, the day's largest turn) until it ends: three fit under 5,000, so three run, where all twelve ran before.
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    for (const r of results.filter((r) => r.status === "rejected"))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 429, details: { limit: "tokensPerDay" } });
    const day = await usage.today("dot");
    expect(day.turns).toBe(3);
    // The reservations are settled: what is left is the three turns' own tokens.
    expect(day.tokens).toBeGreaterThan(0);
    expect(day.tokens).toBeLessThan(3 * 2048 + 1);
    // Sequential turns keep the day's semantics: admitted while the day's tokens are under the limit.
    clock.now += 86_400_000;
    const { sessionId } = await chat.reply({ userId: "dot", message: "a new day" });
    while ((await usage.today("dot")).tokens < 5000) await chat.reply({ userId: "dot", sessionId, message: "more" });
    await expect(chat.reply({ userId: "dot", sessionId, message: "over" })).rejects.toMatchObject({ status: 429 });
  });

  it("reserves what the session's last turn spent, never less than a reply's ceiling nor more than a quarter of the day's limit", async () => {
    const clock = { now: START };
    const { usage } = await service({ tokensPerDay: 1_000_000, projects: { small: { tokensPerDay: 40_000 } } }, clock);
    expect(usage.reservation(null, undefined)).toBe(2048);
    expect(usage.reservation(null, 10)).toBe(2048);
    expect(usage.reservation(null, 9000)).toBe(9000);
    expect(usage.reservation(null, 900_000)).toBe(250_000);
    expect(usage.reservation("small", 30_000)).toBe(10_000);
  });

  it("keeps what a turn spent on its session's record, for the session's next turn to reserve", async () => {
    const clock = { now: START };
    const { chat, usage, tableName } = await service({ tokensPerDay: 1_000_000 }, clock);
    const { sessionId } = await chat.reply({ userId: "fay", message: "hello" });
    const { trace } = await chat.reply({ userId: "fay", sessionId, message: "tell me more" });
    const spent = trace.reduce((n, step) => n + (step.usage?.total_tokens ?? 0), 0);
    expect(spent).toBeGreaterThan(0);
    const owner = await stack.harness.dynamo.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: sessionId }, sk: { S: "session" } } }),
    );
    expect(owner.Item?.turn_tokens).toEqual({ N: String(spent) });
    // Settled: nothing is held once the turns ended, and the day's tokens are what they spent.
    expect((await usage.today("fay")).held).toBe(0);
  });

  // The eleventh part's leftover: a turn refused only because running turns' reservations filled
  // the day was told to come back at midnight, though the reservations clear when those turns end.
  it("tells a turn refused by running turns' reservations to come back soon, and one refused by the day's spend at midnight", async () => {
    const clock = { now: START };
    const { usage } = await service({ tokensPerDay: 5000 }, clock);
    // Admitted while the day's tokens, reservations in, are under the limit: three of 2,048 each.
    const running = [(await usage.admit("hal"))!, (await usage.admit("hal"))!, (await usage.admit("hal"))!];
    const held = await refusal(usage.admit("hal"));
    expect(held.details).toMatchObject({ limit: "tokensPerDay", value: 5000, retry_after_seconds: 30 });
    expect(held.headers).toEqual({ "retry-after": "30" });
    expect(held.message).toMatch(/running turns hold the rest/);
    // Once they end, their own tokens are what counts: under the limit, the next turn runs.
    for (const admission of running) await usage.addTokens("hal", 100, admission);
    const admitted = (await usage.admit("hal"))!;
    // Spent: the day's own tokens reach the limit, and the day starts again at midnight.
    await usage.addTokens("hal", 4700, admitted);
    const spent = await refusal(usage.admit("hal"));
    expect(spent.headers?.["retry-after"]).toBe(String(14 * 3600 - 15));
    expect(spent.message).not.toMatch(/running turns/);
    // A reservation no turn has settled for longer than a function can run was a crashed turn's:
    // it is spent for the day, and waiting for it would be waiting for nothing.
    const clock2 = { now: START };
    const { usage: usage2 } = await service({ tokensPerDay: 5000 }, clock2);
    for (let i = 0; i < 3; i++) await usage2.admit("ivy");
    clock2.now += 16 * 60_000;
    const stale = await refusal(usage2.admit("ivy"));
    expect(stale.headers?.["retry-after"]).toBe(String(14 * 3600 - 15 - 16 * 60));
  });

  // A review's finding: the reservation's time kept was the latest admission's, so a turn that died
  // at 09:00 still read as "running turns hold the rest" for 15 minutes after any later turn.
  it("judges each reservation by its own age: a dead turn's is spent, though a later turn was admitted", async () => {
    const clock = { now: Date.UTC(2026, 10, 23, 9, 0, 0) };
    const { usage } = await service({ tokensPerDay: 5000 }, clock);
    await usage.admit("kim"); // dies: never settled
    await usage.addTokens("kim", 2000, (await usage.admit("kim"))!);
    clock.now = Date.UTC(2026, 10, 23, 12, 0, 0);
    await usage.addTokens("kim", 1000, (await usage.admit("kim"))!);
    clock.now += 60_000;
    const refused = await refusal(usage.admit("kim"));
    expect(refused.headers?.["retry-after"]).toBe(String(12 * 3600 - 60));
    expect(refused.message).not.toMatch(/running turns/);
  });

  // The session-naming call (a new session's first turn) is the user's model spend too.
  it("counts a new session's naming call with the turn's own model calls", async () => {
    const clock = { now: START };
    const { checkpointer, owners, tableName } = await stack.harness.stateTables();
    const usage = new UserUsage(stack.harness.dynamo.client, tableName, { tokensPerDay: 1_000_000 }, () => clock.now);
    const chat = new ChatService({
      graph: buildChatGraph({ model: new OfflineChatModel(), tools: [], checkpointer }),
      owners,
      conversations: stack.harness.conversations,
      recursionLimit: 12,
      usage,
      namingModel: new OfflineChatModel(),
    });
    const { trace } = await chat.reply({ userId: "jon", message: "plan a trip to Lisbon in May" });
    const turnTokens = trace.reduce((n, step) => n + (step.usage?.total_tokens ?? 0), 0);
    expect(turnTokens).toBeGreaterThan(0);
    expect((await usage.today("jon")).tokens).toBeGreaterThan(turnTokens);
  });

  it("gives a turn's reservation back when it is refused after its admission (a bad checkpoint id)", async () => {
    const clock = { now: START };
    const { chat, usage } = await service({ tokensPerDay: 100_000 }, clock);
    const { sessionId } = await chat.reply({ userId: "ida", message: "hello" });
    const before = (await usage.today("ida")).tokens;
    await expect(
      chat.run({ userId: "ida", sessionId, message: "branch", options: { checkpointId: "no-such-checkpoint" } }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await usage.today("ida")).tokens).toBe(before);
  });

  it("costs a plain turn no DynamoDB request more with a quota set: 4 either way", async () => {
    const clock = { now: START };
    const limited = await service({ turnsPerMinute: 100, tokensPerDay: 1_000_000 }, clock);
    const { sessionId } = await limited.chat.reply({ userId: "eve", message: "hello there" });
    stack.meter.reset();
    await limited.chat.reply({ userId: "eve", sessionId, message: "thanks, all good" });
    // The owner record with the latest checkpoint (one Query), the lease with the count (one
    // transaction), the checkpoint write, and the release with the tokens (one transaction).
    expect(stack.meter.byCommand).toEqual({ QueryCommand: 1, TransactWriteItemsCommand: 2, BatchWriteItemCommand: 1 });

    const open = await service({}, clock);
    const first = await open.chat.reply({ userId: "eve", message: "hello there" });
    stack.meter.reset();
    await open.chat.reply({ userId: "eve", sessionId: first.sessionId, message: "thanks, all good" });
    expect(stack.meter.byCommand).toEqual({ UpdateItemCommand: 2, QueryCommand: 1, BatchWriteItemCommand: 1 });
  });

  it("counts a project with quotas of its own apart: its turns against its limits, the rest against the deployment's", async () => {
    const clock = { now: START };
    const { chat, usage, model } = await service(
      { turnsPerMinute: 3, projects: { tight: { turnsPerMinute: 1 } } },
      clock,
    );
    const { sessionId } = await chat.reply({ userId: "fin", projectId: "tight", message: "hello" });
    // A turn of that session names no project: its lease says which, and the project's limit applies.
    const calls = model.calls;
    const err = await refusal(chat.reply({ userId: "fin", sessionId, message: "again" }));
    expect(err.status).toBe(429);
    expect(err.details).toMatchObject({ limit: "turnsPerMinute", value: 1 });
    expect(err.message).toMatch(/^over project "tight"'s limit of 1 turn a minute/);
    expect(model.calls).toBe(calls);
    expect((await refusal(chat.reply({ userId: "fin", projectId: "tight", message: "a new session" }))).status).toBe(
      429,
    );
    // Outside the project the deployment's limit and count apply: three turns, then refused.
    for (const projectId of [undefined, "other", undefined])
      await expect(chat.reply({ userId: "fin", projectId, message: "elsewhere" })).resolves.toBeDefined();
    const outside = await refusal(chat.reply({ userId: "fin", message: "a fourth" }));
    expect(outside.details).toMatchObject({ value: 3 });
    expect(outside.message).toMatch(/^over this deployment's limit of 3 turns a minute/);
    expect(await usage.today("fin", clock.now, "tight")).toMatchObject({ turns: 1, turnsThisMinute: 1 });
    expect(await usage.today("fin", clock.now)).toMatchObject({ turns: 3, turnsThisMinute: 3 });
    // The refused turn gave its lease back: the next minute's turn runs at once, not 409 busy.
    clock.now = START + 45_000;
    await expect(chat.reply({ userId: "fin", sessionId, message: "next minute" })).resolves.toMatchObject({
      sessionId,
    });
  });
});
