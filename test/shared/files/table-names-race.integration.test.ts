import { startedSession } from "../../support/started-session";
import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { describeDataFilesForPrompt } from "../../../graph/tools/data-files";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { inProcessEngine } from "../../../shared/files/data-core";
import { FileRecords } from "../../../shared/files/records";
import { FileService } from "../../../shared/files/service";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { memoryObjects } from "../../support/memory-objects";

// Two files whose names make the same table, checked at the same moment: each check read the
// session's other files before either was stored, so both were stored as "sales". The files list
// and the tools named them sales and sales_2 by their order, while the complete answers and the
// prompt said "sales" for both; and deleting the first renamed the second. A name is now claimed
// in the session when a file is checked, so it is unique when stored and kept.

let dynamo: LocalDynamo;
let table: string;
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `names-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

const body = new TextEncoder().encode("region,amount\neast,1\n");

async function session(settleOrder?: number[]) {
  const objects = memoryObjects();
  const owners = new SessionOwners(dynamo.client, table);
  const records = new FileRecords(dynamo.client, table);
  if (settleOrder) {
    // Both checks have chosen their names before either record is written, then the records are
    // written in the order given (by arrival: 0 is the first check to get here).
    const settleRecord = records.settle.bind(records);
    const gates = settleOrder.map(() => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    let arrived = 0;
    records.settle = async (file) => {
      const mine = arrived++;
      if (arrived === settleOrder.length) gates[settleOrder[0]!]!.resolve();
      await gates[mine]!.promise;
      try {
        return await settleRecord(file);
      } finally {
        const next = settleOrder[settleOrder.indexOf(mine) + 1];
        if (next !== undefined) gates[next]!.resolve();
      }
    };
  }
  const files = new FileService({
    records,
    objects,
    owners,
    engine: inProcessEngine(objects.read),
    config: { FILES_MAX_BYTES: 1_000_000, FILES_PER_SESSION: 20, FILES_MAX_ROWS: 100, FILES_URL_TTL_SECONDS: 60 },
  });
  const sessionId = await startedSession(owners);
  const upload = async (name: string) => {
    const file = await files.create("ann", sessionId, { name, media_type: "text/csv", bytes: body.byteLength });
    objects.stored.set(`users/ann/sessions/${sessionId}/${file.file_id}`, body);
    return file.file_id;
  };
  const tables = async () => Object.fromEntries((await files.list("ann", sessionId)).map((f) => [f.name, f.table]));
  const prompt = async () => describeDataFilesForPrompt((await owners.session(sessionId))!.dataFiles);
  return { files, records, sessionId, upload, tables, prompt };
}

it.each([
  ["the first check's record written first", [0, 1]],
  ["the second check's record written first", [1, 0]],
])(
  "names two files checked at once apart, the same in their answers, the list and the prompt (%s)",
  async (_order, settleOrder) => {
    const { files, sessionId, upload, tables, prompt } = await session(settleOrder);
    const ids = [await upload("sales.csv"), await upload("Sales.csv")];
    const answers = await Promise.all(ids.map((id) => files.complete("ann", sessionId, id)));
    const listed = await tables();
    expect(new Set(Object.values(listed))).toEqual(new Set(["sales", "sales_2"]));
    for (const answer of answers) expect(answer.table).toBe(listed[answer.name]);
    const lines = (await prompt())!;
    for (const [name, t] of Object.entries(listed)) expect(lines).toContain(`- ${name} as table "${t}":`);
  },
);

it("keeps a file's name when the file that had the name first is deleted, and gives the name to the next", async () => {
  const { files, sessionId, upload, tables } = await session();
  const first = await upload("sales.csv");
  await files.complete("ann", sessionId, first);
  const second = await upload("Sales.csv");
  expect((await files.complete("ann", sessionId, second)).table).toBe("sales_2");
  await files.remove("ann", sessionId, first);
  expect(await tables()).toEqual({ "Sales.csv": "sales_2" });
  const third = await upload("SALES.csv");
  expect((await files.complete("ann", sessionId, third)).table).toBe("sales");
  expect(await tables()).toEqual({ "Sales.csv": "sales_2", "SALES.csv": "sales" });
});

// A file deleted between its check's record write and its summary on the owner record: the delete
// found no summary to remove, the summary landed after, and the prompt listed a deleted file.
it("leaves no summary of a file deleted while its check was writing it", async () => {
  const { files, sessionId, upload, records, prompt } = await session();
  const internals = records as unknown as { noteDataFile(record: unknown): Promise<void> };
  const note = internals.noteDataFile.bind(records);
  let atSummary!: () => void;
  let proceed!: () => void;
  const reached = new Promise<void>((r) => (atSummary = r));
  const held = new Promise<void>((r) => (proceed = r));
  internals.noteDataFile = async (record) => {
    atSummary();
    await held;
    return note(record);
  };
  const id = await upload("sales.csv");
  const completing = files.complete("ann", sessionId, id);
  await reached;
  await files.remove("ann", sessionId, id);
  proceed();
  await completing.catch(() => undefined);
  expect(await prompt()).toBeUndefined();
});

// A check whose record write failed kept the name it had claimed: once its file was deleted
// (still pending, so with no name to give back), no other file could have that name again.
it("gives a claimed name back when the check's record write fails", async () => {
  const { files, sessionId, upload, records } = await session();
  const settleRecord = records.settle.bind(records);
  records.settle = async () => {
    throw new Error("DynamoDB is unavailable");
  };
  const id = await upload("sales.csv");
  await expect(files.complete("ann", sessionId, id)).rejects.toThrow(/unavailable/);
  records.settle = settleRecord;
  await files.remove("ann", sessionId, id);
  const next = await upload("Sales.csv");
  expect((await files.complete("ann", sessionId, next)).table).toBe("sales");
});
