import { startedSession } from "../../support/started-session";
import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { FileRecords } from "../../../shared/files/records";
import { FileService } from "../../../shared/files/service";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { pngBytes } from "../../support/images";
import { memoryObjects } from "../../support/memory-objects";

// FILES_PER_SESSION holds under concurrency, and counts the images a message carries inline: a
// session never stores more files than the limit, whoever adds them and however fast.

const LIMIT = 20;
let dynamo: LocalDynamo;
let table: string;

function service(objects = memoryObjects()) {
  const records = new FileRecords(dynamo.client, table);
  const owners = new SessionOwners(dynamo.client, table);
  const files = new FileService({
    records,
    objects,
    owners,
    config: { FILES_MAX_BYTES: 1_000_000, FILES_PER_SESSION: LIMIT, FILES_MAX_ROWS: 100, FILES_URL_TTL_SECONDS: 60 },
  });
  return { files, records, owners, objects };
}

const newSession = (user = "ann") => startedSession(new SessionOwners(dynamo.client, table), user);

const csv = { name: "a.csv", media_type: "text/csv", bytes: 8 };
const image = () => ({ name: "i.png", media_type: "image/png", bytes: pngBytes(2, 2), width: 2, height: 2 });
const code = (err: unknown) => (err as { code?: string }).code;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `files-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

describe("the per-session file limit", () => {
  it("holds when 40 uploads are created at once: 20 stored, 20 refused with too_many_files", async () => {
    const { files, records } = service();
    const sessionId = await newSession();
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => files.create("ann", sessionId, csv)));
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused.map((r) => code((r as PromiseRejectedResult).reason))).toEqual(
      Array(40 - LIMIT).fill("too_many_files"),
    );
    expect((await records.list(sessionId)).length).toBe(LIMIT);
  });

  it("counts inline images: a message whose images do not all fit stores none of them", async () => {
    const { files, records, objects } = service();
    const sessionId = await newSession();
    for (let i = 0; i < LIMIT - 1; i++) await files.create("ann", sessionId, csv);
    await expect(files.storeImages("ann", sessionId, [image(), image()])).rejects.toMatchObject({
      code: "too_many_files",
    });
    expect((await records.list(sessionId)).length).toBe(LIMIT - 1);
    expect(objects.stored.size).toBe(0);
    const [stored] = await files.storeImages("ann", sessionId, [image()]);
    expect(stored).toMatchObject({ status: "ready", kind: "image" });
    await expect(files.create("ann", sessionId, csv)).rejects.toMatchObject({ code: "too_many_files" });
    await expect(files.storeImages("ann", sessionId, [image()])).rejects.toMatchObject({ code: "too_many_files" });
  });

  it("holds when inline images and uploads race for the last slots", async () => {
    const { files, records } = service();
    const sessionId = await newSession();
    for (let i = 0; i < LIMIT - 5; i++) await files.create("ann", sessionId, csv);
    await Promise.allSettled([
      ...Array.from({ length: 6 }, () => files.create("ann", sessionId, csv)),
      ...Array.from({ length: 4 }, () => files.storeImages("ann", sessionId, [image(), image()])),
    ]);
    expect((await records.list(sessionId)).length).toBe(LIMIT);
  });

  it("gives a slot back when a file is deleted, once however often the delete comes", async () => {
    const { files, records } = service();
    const sessionId = await newSession();
    const made = [];
    for (let i = 0; i < LIMIT; i++) made.push(await files.create("ann", sessionId, csv));
    await expect(files.create("ann", sessionId, csv)).rejects.toMatchObject({ code: "too_many_files" });
    const first = made[0]!.file_id;
    await Promise.allSettled([files.remove("ann", sessionId, first), files.remove("ann", sessionId, first)]);
    await files.create("ann", sessionId, csv);
    await expect(files.create("ann", sessionId, csv)).rejects.toMatchObject({ code: "too_many_files" });
    expect((await records.list(sessionId)).length).toBe(LIMIT);
  });

  it("starts the count of a session whose files were stored before it was counted from its records", async () => {
    const { files, records } = service();
    const sessionId = await newSession();
    for (let i = 0; i < LIMIT - 1; i++)
      await records.create({
        file_id: randomUUID(),
        session_id: sessionId,
        user_id: "ann",
        name: "old.csv",
        media_type: "text/csv",
        bytes: 8,
        kind: "data",
        status: "ready",
        key: `users/ann/sessions/${sessionId}/${randomUUID()}`,
        created_at: new Date().toISOString(),
      });
    const results = await Promise.allSettled([
      files.create("ann", sessionId, csv),
      files.create("ann", sessionId, csv),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await records.list(sessionId)).length).toBe(LIMIT);
  });

  it("gives every slot back, and keeps nothing, when storing a message's images fails half-way", async () => {
    const objects = memoryObjects();
    let writes = 0;
    const write = objects.write;
    objects.write = async (key, body, type) => {
      if (++writes === 2) throw new Error("bucket unavailable");
      return write(key, body, type);
    };
    const { files, records } = service(objects);
    const sessionId = await newSession();
    for (let i = 0; i < LIMIT - 3; i++) await files.create("ann", sessionId, csv);
    await expect(files.storeImages("ann", sessionId, [image(), image(), image()])).rejects.toThrow(/unavailable/);
    expect(objects.stored.size).toBe(0);
    expect((await records.list(sessionId)).length).toBe(LIMIT - 3);
    await files.storeImages("ann", sessionId, [image(), image(), image()]);
    expect((await records.list(sessionId)).length).toBe(LIMIT);
  });

  it("refuses another user's session before anything is counted or written", async () => {
    const { files, records } = service();
    const sessionId = await newSession("ann");
    await expect(files.create("bob", sessionId, csv)).rejects.toMatchObject({ code: "session_not_found" });
    await expect(files.storeImages("bob", sessionId, [image()])).rejects.toMatchObject({ code: "session_not_found" });
    expect(await records.list(sessionId)).toEqual([]);
  });
});
