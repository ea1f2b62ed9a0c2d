import { startedSession } from "../../support/started-session";
import { randomUUID } from "node:crypto";
import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import type { DataEngine } from "../../../shared/files/data-engine";
import type { Inspection } from "../../../shared/files/inspect";
import { memoryObjects } from "../../support/memory-objects";
import { FileRecords } from "../../../shared/files/records";
import { FileService } from "../../../shared/files/service";
import { SessionOwners } from "../../../shared/stores/session-owners";

// An upload is checked by whichever of two callers comes first: the client's complete call and the
// bucket's notification, which in AWS arrive within a second of each other. A data file's check is a
// data function invocation (a local engine process): the eleventh part's probe found every upload
// checked twice at once, paid twice, and one hostile upload holding both local engine processes.

let dynamo: LocalDynamo;
let table: string;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `one-check-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

const CSV = new TextEncoder().encode("region,amount\nnorth,1\n");

/** An engine whose inspections take `ms` and are counted; `fail` makes the next one throw (a crashed check). */
function countingEngine(ms: number) {
  const state = { inspections: 0, fail: false };
  const inspection: Inspection = {
    ok: true,
    kind: "data",
    format: "csv",
    columns: [
      { name: "region", type: "VARCHAR" },
      { name: "amount", type: "BIGINT" },
    ],
    row_count: 1,
  } as Inspection;
  const engine = {
    inspect: async () => {
      state.inspections += 1;
      await new Promise((r) => setTimeout(r, ms));
      if (state.fail) {
        state.fail = false;
        throw new Error("the data function's process died");
      }
      return inspection;
    },
  } as unknown as DataEngine;
  return { engine, state };
}

async function setup(ms: number) {
  const objects = memoryObjects();
  const { stored } = objects;
  const { engine, state } = countingEngine(ms);
  const records = new FileRecords(dynamo.client, table);
  const service = new FileService({
    records,
    objects,
    engine,
    owners: new SessionOwners(dynamo.client, table),
    config: { FILES_MAX_BYTES: 1_000_000, FILES_PER_SESSION: 20, FILES_MAX_ROWS: 100, FILES_URL_TTL_SECONDS: 60 },
  });
  const sessionId = await startedSession(new SessionOwners(dynamo.client, table));
  const upload = async () => {
    const { file_id } = await service.create("ann", sessionId, {
      name: "sales.csv",
      media_type: "text/csv",
      bytes: CSV.byteLength,
    });
    const record = (await records.get(sessionId, file_id))!;
    stored.set(record.key, CSV);
    return record;
  };
  return { service, state, sessionId, records, upload };
}

describe("an upload's check", () => {
  it("runs once when the complete call and the bucket's notification arrive together; both see it settled", async () => {
    const { service, state, upload } = await setup(300);
    const record = await upload();
    const [completed, landed] = await Promise.all([
      service.complete("ann", record.session_id, record.file_id),
      service.landed(record.key),
    ]);
    expect(state.inspections).toBe(1);
    expect(completed).toMatchObject({ status: "ready", row_count: 1 });
    expect(landed).toBe("settled");
    // The claim is the service's own: the settled record's write dropped it from the stored item.
    const stored = await DynamoDBDocumentClient.from(dynamo.client).send(
      new GetCommand({ TableName: table, Key: { pk: record.session_id, sk: `f#${record.file_id}` } }),
    );
    expect(stored.Item).toMatchObject({ status: "ready" });
    expect(Object.keys(stored.Item!).filter((k) => k.startsWith("checking_"))).toEqual([]);
  });

  it("runs once for a notification delivered twice while the complete call checks", async () => {
    const { service, state, upload } = await setup(300);
    const record = await upload();
    const results = await Promise.all([
      service.complete("ann", record.session_id, record.file_id),
      service.landed(record.key),
      service.landed(record.key),
    ]);
    expect(state.inspections).toBe(1);
    expect(results[0]).toMatchObject({ status: "ready" });
  });

  it("is taken over by the next caller when the check that claimed it died", async () => {
    const { service, state, upload, records } = await setup(50);
    const record = await upload();
    state.fail = true;
    await expect(service.complete("ann", record.session_id, record.file_id)).rejects.toThrow(/process died/);
    // The failed check gave its claim back: the notification's retry checks at once.
    expect(await service.landed(record.key)).toBe("settled");
    expect(state.inspections).toBe(2);
    expect(await records.get(record.session_id, record.file_id)).toMatchObject({ status: "ready" });
  });

  it("is taken over once a claim whose holder vanished without giving it back has run out", async () => {
    const { service, state, upload, records } = await setup(50);
    const record = await upload();
    // A holder that vanished (its process ended mid-check) left a claim that has run out.
    expect(await records.claimCheck(record.session_id, record.file_id, "vanished", -1)).toBe(true);
    await expect(service.complete("ann", record.session_id, record.file_id)).resolves.toMatchObject({
      status: "ready",
    });
    expect(state.inspections).toBe(1);
  });

  it("answers 503 file_checking with Retry-After when another's check outlasts the wait, and writes nothing", async () => {
    const { service, state, upload, records } = await setup(50);
    const record = await upload();
    expect(await records.claimCheck(record.session_id, record.file_id, "other", 60_000)).toBe(true);
    const err = await service.settle(record, 300).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 503, code: "file_checking", headers: { "retry-after": "5" } });
    expect(state.inspections).toBe(0);
    expect(await records.get(record.session_id, record.file_id)).toMatchObject({ status: "pending" });
  });

  it("is answered 404 by a waiter whose file was deleted meanwhile", async () => {
    const { service, upload, records } = await setup(50);
    const record = await upload();
    expect(await records.claimCheck(record.session_id, record.file_id, "other", 60_000)).toBe(true);
    const waiting = service.settle(record, 5_000);
    await records.delete(record.session_id, record.file_id);
    await expect(waiting).rejects.toMatchObject({ status: 404, code: "file_not_found" });
  });
});
