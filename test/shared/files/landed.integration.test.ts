import { startedSession } from "../../support/started-session";
import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import type { FileObjects } from "../../../shared/files/objects";
import { FileRecords } from "../../../shared/files/records";
import { FileService } from "../../../shared/files/service";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { pngBytes } from "../../support/images";

// The bucket's notification (FileService.landed) discards bytes no file takes, and only those:
// it may arrive at any moment, before the write that caused it has returned.

let dynamo: LocalDynamo;
let table: string;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  table = `landed-${randomUUID()}`;
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

/** A bucket in memory whose every write is announced at once, as S3 may, before the write returns. */
function announcingObjects(onWrite: (key: string) => Promise<unknown>) {
  const stored = new Map<string, Uint8Array>();
  const objects: FileObjects = {
    uploadUrl: async (key) => ({ url: `memory://${key}`, headers: {} }),
    downloadUrl: async (key) => `memory://${key}`,
    read: async (key) => stored.get(key),
    write: async (key, body) => {
      stored.set(key, body);
      await onWrite(key);
    },
    deleteUnder: async (prefix) => {
      for (const k of [...stored.keys()]) if (k.startsWith(prefix)) stored.delete(k);
    },
    delete: async (keys) => {
      for (const k of keys) stored.delete(k);
    },
  };
  return { objects, stored };
}

async function setup(records = new FileRecords(dynamo.client, table)) {
  let service: FileService | undefined;
  const { objects, stored } = announcingObjects((key) => service!.landed(key));
  service = new FileService({
    records,
    objects,
    owners: new SessionOwners(dynamo.client, table),
    config: { FILES_MAX_BYTES: 1_000_000, FILES_PER_SESSION: 20, FILES_MAX_ROWS: 100, FILES_URL_TTL_SECONDS: 60 },
  });
  const sessionId = await startedSession(new SessionOwners(dynamo.client, table));
  return { service, objects, stored, sessionId, records: new FileRecords(dynamo.client, table) };
}

describe("the upload notification", () => {
  it("keeps an inline image whose notification arrives before its record would have been written", async () => {
    const { service, stored, sessionId, records } = await setup();
    const [image] = await service.storeImages("ann", sessionId, [
      { name: "i.png", media_type: "image/png", bytes: pngBytes(4, 3), width: 4, height: 3 },
    ]);
    expect(image).toMatchObject({ status: "ready", width: 4, height: 3 });
    expect(stored.has(image!.key)).toBe(true);
    expect(await records.get(sessionId, image!.file_id)).toMatchObject({ status: "ready" });
  });

  it("discards bytes under a key this API made for no file, and ignores keys it did not make", async () => {
    const { service, stored, sessionId } = await setup();
    const stray = `users/ann/sessions/${sessionId}/${randomUUID()}`;
    stored.set(stray, new Uint8Array([1]));
    expect(await service.landed(stray)).toBe("discarded");
    expect(stored.has(stray)).toBe(false);
    stored.set("elsewhere/x", new Uint8Array([1]));
    expect(await service.landed("elsewhere/x")).toBe("ignored");
    expect(stored.has("elsewhere/x")).toBe(true);
  });

  // The notification deleted a rejected upload's bytes before it wrote the rejection: a complete
  // call in that gap found no bytes and a pending record, and answered 409 upload_missing for a
  // file whose bytes had landed.
  it("never leaves a complete call in between a rejection's delete and its record (no 409 for bytes that landed)", async () => {
    const records = new FileRecords(dynamo.client, table);
    const settleRecord = records.settle.bind(records);
    let entered!: () => void;
    let open!: () => void;
    const inGap = new Promise<void>((r) => (entered = r));
    const gate = new Promise<void>((r) => (open = r));
    let calls = 0;
    records.settle = async (file) => {
      if (calls++ === 0) {
        entered();
        await gate; // the notification's write, held
      }
      return settleRecord(file);
    };
    const { service, stored, sessionId } = await setup(records);
    const { file_id } = await service.create("ann", sessionId, { name: "x.png", media_type: "image/png", bytes: 3 });
    const key = `users/ann/sessions/${sessionId}/${file_id}`;
    stored.set(key, new Uint8Array([1, 2, 3])); // not an image: rejected
    const notified = service.landed(key);
    await inGap;
    const completed = await service.complete("ann", sessionId, file_id);
    open();
    await notified;
    expect(completed).toMatchObject({ status: "rejected" });
    expect(stored.has(key)).toBe(false);
  });

  // The rejection is recorded, then its bytes deleted: a bucket error on that delete answered 5xx
  // for a file already settled. The notification (or the bucket's expiry) deletes them later.
  it("answers a rejection once it is recorded, even when deleting its bytes fails", async () => {
    const { service, objects, stored, sessionId, records } = await setup();
    const { file_id } = await service.create("ann", sessionId, { name: "x.png", media_type: "image/png", bytes: 3 });
    const key = `users/ann/sessions/${sessionId}/${file_id}`;
    stored.set(key, new Uint8Array([1, 2, 3]));
    objects.delete = async () => {
      throw new Error("S3 is unavailable");
    };
    expect(await service.complete("ann", sessionId, file_id)).toMatchObject({ status: "rejected" });
    expect(await records.get(sessionId, file_id)).toMatchObject({ status: "rejected" });
  });
});
