import { echoGraph, humanTurn } from "../../support/conversation";
import { checkpointHarness } from "../../support/dynamo";
import { meter } from "../../support/dynamo-meter";
import { scanAll } from "../../support/scan";

let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 86_400;

describe("TTL", () => {
  it("sets an expiry on every item: checkpoints and writes after the TTL, shared pieces after 1.5x", async () => {
    const { saver, tableName } = await harness.newSaver({ ttlDays: 7 });
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 4; turn++) await graph.invoke(humanTurn(turn), { configurable: { thread_id: "ttl" } });
    const now = Date.now() / 1000;
    const items = await scanAll(harness.dynamo.client, tableName);
    expect(items.length).toBeGreaterThan(10);
    for (const item of items) {
      expect(item.expires_at).toBeTypeOf("number");
      const shared = item.sk.startsWith("l#") || item.sk.startsWith("x#");
      expect(item.expires_at - now).toBeGreaterThan((shared ? 10.5 : 7) * DAY - 60);
      expect(item.expires_at - now).toBeLessThanOrEqual((shared ? 10.5 : 7) * DAY + 1);
    }
    expect(items.some((i) => i.sk.startsWith("l#"))).toBe(true);
  });

  it("rewrites stored messages once they are older than half the TTL, so the latest checkpoint never outlives them", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    const { saver, tableName } = await harness.newSaver({ ttlDays: 2 });
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 6; turn++)
      await graph.invoke(humanTurn(turn), { configurable: { thread_id: "refresh" } });
    const logEntries = async () =>
      (await scanAll(harness.dynamo.client, tableName)).filter((i) => i.sk.startsWith("l#"));
    const before = await logEntries();
    expect(before.length).toBe(12);
    const oldest = Math.min(...before.map((i) => i.expires_at));

    vi.setSystemTime(new Date("2026-01-02T01:00:00Z")); // 25 hours later: past half of a 2-day TTL
    await graph.invoke(humanTurn(7), { configurable: { thread_id: "refresh" } });
    const after = await logEntries();
    expect(after.length).toBe(14);
    expect(Math.min(...after.map((i) => i.expires_at))).toBeGreaterThan(oldest + 24 * 3600);
  });

  it("keeps writing only new messages while the stored ones are fresh", async () => {
    const { saver } = await harness.newSaver({ ttlDays: 30 });
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 6; turn++) await graph.invoke(humanTurn(turn), { configurable: { thread_id: "fresh" } });
    const m = meter(harness.dynamo.client);
    await graph.invoke(humanTurn(7), { configurable: { thread_id: "fresh" } });
    m.detach();
    // The turn's two new messages, each written once; none of the 12 stored before.
    expect(m.writtenKeys.filter((sk) => sk.startsWith("l#"))).toHaveLength(2);
  });
});

describe("deleteThread", () => {
  it("removes every item of the thread, offloaded parts included, and nothing of other threads", async () => {
    const { saver, tableName } = await harness.newSaver();
    const graph = echoGraph(saver);
    for (let turn = 1; turn <= 30; turn++)
      await graph.invoke(humanTurn(turn), { configurable: { thread_id: "doomed" } });
    await graph.invoke(humanTurn(1, 500_000), { configurable: { thread_id: "doomed" } }); // forces part items
    await graph.invoke(humanTurn(1), { configurable: { thread_id: "kept" } });
    const before = await scanAll(harness.dynamo.client, tableName);
    const doomed = before.filter((i) => i.pk === "doomed");
    expect(doomed.length).toBeGreaterThan(100); // more than one delete batch
    expect(doomed.some((i) => i.sk.startsWith("x#"))).toBe(true);

    await saver.deleteThread("doomed");

    const after = await scanAll(harness.dynamo.client, tableName);
    expect(after.filter((i) => i.pk === "doomed")).toEqual([]);
    expect(after.length).toBe(before.length - doomed.length);
    expect(await saver.getTuple({ configurable: { thread_id: "doomed" } })).toBeUndefined();
    expect(await saver.getTuple({ configurable: { thread_id: "kept" } })).toBeDefined();
  });
});
