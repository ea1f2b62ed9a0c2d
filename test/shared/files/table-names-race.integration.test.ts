import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { describeDataFilesForPrompt } from "../../../graph/tools/data-files";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { inProcessEngine } from "../../../shared/files/data-core";
import { FileRecords } from "../../../shared/files/records";
import { FileService } from "../../../shared/files/service";
import { storedSettings } from "../../../shared/session-settings";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { memoryObjects } from "../../support/memory-objects";

// Two files whose names make the same table, checked at the same moment: each check read the
// session's other files before either was stored, so both were stored as "sales". The files list
// and the tools named them sales and sales_2, while the complete answers and the prompt (from the
// owner record's summaries) said "sales" for both.

let dynamo: LocalDynamo;
let table: string;
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `names-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

it("names two files checked at once apart, the same in their answers, the files list and the prompt", async () => {
  const objects = memoryObjects();
  const owners = new SessionOwners(dynamo.client, table);
  // Both checks have chosen their names before either is stored: the race, every time.
  const records = new FileRecords(dynamo.client, table);
  const settleRecord = records.settle.bind(records);
  let arrived = 0;
  let bothChosen!: () => void;
  const barrier = new Promise<void>((r) => (bothChosen = r));
  records.settle = async (file) => {
    if (++arrived === 2) bothChosen();
    await barrier;
    return settleRecord(file);
  };
  const files = new FileService({
    records,
    objects,
    owners,
    engine: inProcessEngine(objects.read),
    config: { FILES_MAX_BYTES: 1_000_000, FILES_PER_SESSION: 20, FILES_MAX_ROWS: 100, FILES_URL_TTL_SECONDS: 60 },
  });
  const sessionId = randomUUID();
  await (await owners.claimLeased(sessionId, "ann", null, storedSettings(undefined)))!.release();
  const body = new TextEncoder().encode("region,amount\neast,1\n");
  const created = [];
  for (const name of ["sales.csv", "Sales.csv"]) {
    const file = await files.create("ann", sessionId, { name, media_type: "text/csv", bytes: body.byteLength });
    objects.stored.set(`users/ann/sessions/${sessionId}/${file.file_id}`, body);
    created.push(file.file_id);
  }
  const answers = await Promise.all(created.map((id) => files.complete("ann", sessionId, id)));
  const listed = await files.list("ann", sessionId);
  const tableOf = (id: string) => listed.find((f) => f.file_id === id)!.table;
  expect(new Set(created.map(tableOf))).toEqual(new Set(["sales", "sales_2"]));
  for (const answer of answers) expect(answer.table).toBe(tableOf(answer.file_id));
  // What a turn's lease update returns: the owner record's summaries.
  console.log(
    JSON.stringify((await owners.session(sessionId))!.dataFiles.map((f) => f.table)),
    JSON.stringify(answers.map((a) => a.table)),
  );
  const prompt = describeDataFilesForPrompt((await owners.session(sessionId))!.dataFiles)!;
  expect(prompt).toContain('as table "sales":');
  expect(prompt).toContain('as table "sales_2":');
});
