import { BatchWriteItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import fc from "fast-check";
import { DynamoDBSaver } from "../../../graph/checkpoint";
import { escapeComponent, keys, parseSortKey } from "../../../graph/checkpoint/keys";
import { echoGraph, humanTurn } from "../../support/conversation";
import { meter } from "../../support/dynamo-meter";
import { checkpointHarness } from "../../support/dynamo";
import { scanAll } from "../../support/scan";

// The root namespace's checkpoints sort last among a thread's checkpoints, right below `session`
// (the owner record other stores keep in the partition), so one Query reads that record with the
// latest checkpoint. Checkpoints written before (under `c#`) are still read.

const OWNER = "session";
let harness: Awaited<ReturnType<typeof checkpointHarness>>;
beforeAll(async () => {
  harness = await checkpointHarness();
});
afterAll(() => harness.close());

const messagesOf = (tuple: { checkpoint: { channel_values: Record<string, unknown> } } | undefined) =>
  ((tuple?.checkpoint.channel_values.messages as { content: unknown }[] | undefined) ?? []).map((m) => m.content);

/** Rewrites a thread's checkpoints and writes into the layout before this one, as an older deployment left them. */
async function toLegacyLayout(tableName: string, thread: string) {
  const items = (await scanAll(harness.dynamo.client, tableName)).filter(
    (i) => i.pk === thread && String(i.sk).startsWith("s#"),
  );
  for (const item of items) {
    const legacy = {
      ...item,
      sk: String(item.sk)
        .replace(/^s#~#/, "c##")
        .replace(/^s#([^#]*)#/, "c#$1#"),
    };
    await harness.dynamo.client.send(new PutItemCommand({ TableName: tableName, Item: marshall(legacy) }));
  }
  for (let i = 0; i < items.length; i += 25)
    await harness.dynamo.client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [tableName]: items
            .slice(i, i + 25)
            .map((item) => ({ DeleteRequest: { Key: marshall({ pk: item.pk, sk: item.sk }) } })),
        },
      }),
    );
}

describe("the checkpoint key layout", () => {
  it("sorts every other namespace's checkpoints below the root's, and the root's below the owner record", () => {
    const id = fc.string({ minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), id, id, fc.nat(99), (ns, a, b, idx) => {
        const root = keys.namespacePrefix("");
        expect(keys.checkpoint(ns, a) < root).toBe(true);
        expect(keys.write(ns, a, b, idx) < root).toBe(true);
        expect(keys.checkpoint("", a) > root && keys.checkpoint("", a) < OWNER).toBe(true);
        expect(keys.write("", a, b, idx) < OWNER).toBe(true);
        expect(parseSortKey(keys.checkpoint(ns, a))).toEqual({ kind: "checkpoint", ns, checkpointId: a });
        expect(parseSortKey(keys.write("", a, b, idx))).toEqual({
          kind: "write",
          ns: "",
          checkpointId: a,
          taskId: b,
          idx,
        });
      }),
    );
    expect(parseSortKey(OWNER)).toEqual({ kind: "other" });
    expect(parseSortKey(`c##${escapeComponent("x")}`)).toEqual({ kind: "checkpoint", ns: "", checkpointId: "x" });
  });
});

describe("latestWith: the latest checkpoint and the records beside it, in one Query", () => {
  it("reads the owner record and the latest checkpoint together, and primes the graph's next read", async () => {
    const { saver, tableName } = await harness.newSaver();
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "with-owner" } };
    for (let turn = 1; turn <= 3; turn++) await graph.invoke(humanTurn(turn), thread);
    await harness.dynamo.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: marshall({ pk: "with-owner", sk: OWNER, user_id: "ann" }),
      }),
    );
    // The saver that wrote the history holds its messages: the read is the one Query.
    const reader = saver;
    const m = meter(harness.dynamo.client);
    const read = await reader.latestWith("with-owner", OWNER);
    expect(m.byCommand).toEqual({ QueryCommand: 1 });
    expect(read.above.map((i) => i.user_id)).toEqual(["ann"]);
    expect(messagesOf(read.tuple)).toEqual(messagesOf(await saver.getTuple(thread)));

    reader.prime("with-owner", read.tuple);
    m.reset();
    const first = await reader.getTuple(thread);
    expect(first?.checkpoint.id).toBe(read.tuple?.checkpoint.id);
    // Each read gets a copy of its own: changing one changes nothing the next read returns.
    (first!.checkpoint.channel_values.messages as unknown[]).length = 0;
    expect(messagesOf(await reader.getTuple(thread))).toEqual(messagesOf(read.tuple));
    expect(m.requests).toBe(0);
    // Until the caller lets it go: the next read is the store's.
    reader.unprime("with-owner");
    expect((await reader.getTuple(thread))?.checkpoint.id).toBe(read.tuple?.checkpoint.id);
    expect(m.requests).toBeGreaterThan(0);
    m.detach();
  });

  it("answers a thread with no checkpoint and no record with neither, and a write undoes a prime", async () => {
    const { saver } = await harness.newSaver();
    expect(await saver.latestWith("nobody", OWNER)).toEqual({ above: [] });
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "primed" } };
    await graph.invoke(humanTurn(1), thread);
    saver.prime("primed", undefined);
    await saver.deleteCheckpointsSince("primed", new Date(Date.now() + 60_000));
    expect(messagesOf(await saver.getTuple(thread))).toHaveLength(2);
  });
});

describe("a thread written in the legacy layout (c#)", () => {
  it("is read, listed, continued and rolled back as before, without duplicates", async () => {
    const { saver, tableName } = await harness.newSaver();
    const graph = echoGraph(saver);
    const thread = { configurable: { thread_id: "old" } };
    for (let turn = 1; turn <= 2; turn++) await graph.invoke(humanTurn(turn), thread);
    const before = messagesOf(await saver.getTuple(thread));
    await toLegacyLayout(tableName, "old");

    const reader = new DynamoDBSaver({ client: harness.dynamo.client, tableName, warn: () => {} });
    expect(messagesOf(await reader.getTuple(thread))).toEqual(before);
    expect((await reader.latestWith("old", OWNER)).tuple?.checkpoint.id).toBe(
      (await reader.getTuple(thread))?.checkpoint.id,
    );
    const oldIds = [];
    for await (const t of reader.list(thread)) oldIds.push(t.checkpoint.id);

    const continued = echoGraph(reader);
    const startedAt = new Date();
    await continued.invoke(humanTurn(3), thread);
    const after = await reader.getTuple(thread);
    expect(messagesOf(after)).toHaveLength(6);
    expect(messagesOf(after).slice(0, 4)).toEqual(before);
    const ids = [];
    for await (const t of reader.list(thread)) ids.push(t.checkpoint.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(ids.length - oldIds.length)).toEqual(oldIds);
    // The new checkpoints are in the current layout.
    const stored = (await scanAll(harness.dynamo.client, tableName)).filter((i) => i.pk === "old");
    expect(stored.some((i) => String(i.sk).startsWith("s#~#"))).toBe(true);

    expect(await reader.deleteCheckpointsSince("old", startedAt)).toBeGreaterThan(0);
    expect(messagesOf(await reader.getTuple(thread))).toEqual(before);
  });
});
