import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { type RunEvent, RunEventLog, RunEventWriter } from "../../../shared/stores/run-events";
import { isStorableText } from "../../../shared/text";

let dynamo: LocalDynamo;
let log: RunEventLog;
let table: string;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `run-events-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
  log = new RunEventLog(dynamo.client, table, { flushMs: 10, pollMs: 10, quietMs: 50 });
});
afterAll(() => dynamo.close());

async function all<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe("RunEventLog", () => {
  it("numbers events from 0, replays after an id, and a follower sees them live until the end, with no gap or duplicate", async () => {
    const runId = randomUUID();
    const writer = log.writer(runId);
    expect(writer.push("metadata", { run_id: runId })).toBe(0);
    expect(writer.push("values", { messages: [] })).toBe(1);
    // A follower joining mid-run: what was written, then what comes.
    const followed = all(log.follow(runId, -1));
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 20; i++) writer.push("messages", [{ content: `token ${i}` }, { run_id: runId }]);
    await writer.close();
    const events = await followed;
    expect(events.map((e) => e.id)).toEqual([...Array(22).keys()]);
    expect(events[0]).toEqual({ id: 0, event: "metadata", data: { run_id: runId } });
    expect(events.at(-1)!.data).toEqual([{ content: "token 19" }, { run_id: runId }]);

    // Last-Event-ID 5: from 6 on; past the end: nothing, and it still ends.
    expect((await all(log.follow(runId, 5))).map((e) => e.id)).toEqual([...Array(16).keys()].map((i) => i + 6));
    expect(await all(log.follow(runId, 21))).toEqual([]);
    expect(await all(log.follow(runId, 1000))).toEqual([]);
    expect(await log.exists(runId)).toBe(true);
    expect(await log.exists(randomUUID())).toBe(false);
  });

  it("keeps any event whole: larger than a page, and cut between pages anywhere (emoji included)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.constantFrom("values", "messages", "custom"), fc.string({ unit: "grapheme", maxLength: 40 })),
          {
            maxLength: 6,
          },
        ),
        fc.integer({ min: 0, max: 3 }),
        async (small, bigAt) => {
          const runId = randomUUID();
          const writer = log.writer(runId);
          const sent: Omit<RunEvent, "id">[] = small.map(([event, text]) => ({ event, data: { text } }));
          // One event of 250 KB of 4-byte characters: pages are cut inside it, never inside a character.
          sent.splice(Math.min(bigAt, sent.length), 0, { event: "values", data: { text: "🐈".repeat(64_000) } });
          for (const e of sent) writer.push(e.event, e.data);
          await writer.close();
          const read = await all(log.follow(runId, -1));
          expect(read).toEqual(sent.map((e, id) => ({ id, ...e })));
          // DynamoDB stores a page as UTF-8, which has no half of a surrogate pair (dynalite keeps
          // one, so the pages themselves are checked): each is well-formed on its own.
          const pages: string[] = [];
          const capture = new RunEventWriter(runId, 1, async (_page, text) => void pages.push(text));
          for (const e of sent) capture.push(e.event, e.data);
          await capture.close();
          expect(pages.length).toBeGreaterThan(1);
          expect(pages.every(isStorableText)).toBe(true);
        },
      ),
      { numRuns: 8 },
    );
  });

  it("refuses a second writer of the same run's pages (a redelivered run), and reports it at close", async () => {
    const runId = randomUUID();
    const first = log.writer(runId);
    first.push("metadata", { n: 1 });
    await first.close();
    const second = log.writer(runId);
    second.push("metadata", { n: 2 });
    await expect(second.close()).rejects.toThrow(/conditional/i);
    expect((await all(log.follow(runId, -1))).map((e) => e.data)).toEqual([{ n: 1 }]);
  });

  it("stops following a run whose writer died without ending its log, once the run is over", async () => {
    const runId = randomUUID();
    const writer = log.writer(runId);
    writer.push("metadata", { run_id: runId });
    await new Promise((r) => setTimeout(r, 50)); // flushed, never closed: the writer's process is gone
    let asked = 0;
    const events = await all(
      log.follow(runId, -1, {
        stillRunning: async () => {
          asked++;
          return asked < 2;
        },
      }),
    );
    expect(events.map((e) => e.event)).toEqual(["metadata"]);
    expect(asked).toBe(2);
  });

  it("stops following when the client goes (abort)", async () => {
    const runId = randomUUID();
    const writer = log.writer(runId);
    writer.push("metadata", {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    expect((await all(log.follow(runId, -1, { signal: controller.signal }))).map((e) => e.id)).toEqual([0]);
    await writer.close();
  });
});
