import { BatchWriteItemCommand, GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { AccessDenied, grantedBackends, heldTo, S3AccessDenied } from "../../../infra/local/granted-backends";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import type { FunctionSpec, Grant } from "../../../infra/manifest";
import type { Backends } from "../../../shared/backends";
import { loadConfig } from "../../../shared/config";
import { createIdempotencyTable } from "../../../shared/idempotency";
import type { FileObjects } from "../../../shared/files/objects";

// The local stack holds each function to its grants (infra/local/granted-backends.ts), so a
// function reaching past them fails locally as it would with AccessDenied in AWS.
const config = loadConfig({});
let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await createCheckpointTable(dynamo.client, config.CHECKPOINT_TABLE);
  await createIdempotencyTable(dynamo.client, config.IDEMPOTENCY_TABLE);
});
afterAll(() => dynamo.close());

const spec = (grants: Grant[]): FunctionSpec => ({
  name: "probe",
  kind: "api",
  timeoutSeconds: 10,
  memoryMB: 256,
  grants,
});

/** A bucket stand-in that only records what reached it. */
function recordingObjects(): FileObjects & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    uploadUrl: async (key) => {
      calls.push(`uploadUrl ${key}`);
      return { url: "u", headers: {} } as never;
    },
    downloadUrl: async (key) => {
      calls.push(`downloadUrl ${key}`);
      return "d";
    },
    // Every key is there but those named missing.
    read: async (key) => {
      calls.push(`read ${key}`);
      return key.includes("missing") ? undefined : new Uint8Array(1);
    },
    write: async (key) => void calls.push(`write ${key}`),
    delete: async (keys) => void calls.push(`delete ${keys.join(",")}`),
    deleteUnder: async (prefix) => void calls.push(`deleteUnder ${prefix}`),
  };
}

const supabaseStandIn = () => ({ deleteSession: async () => 1 }) as never;

function everything(): Backends & { files: ReturnType<typeof recordingObjects> } {
  const queue = { publish: async () => undefined } as never;
  return {
    config,
    dynamo: dynamo.client,
    conversations: supabaseStandIn(),
    store: supabaseStandIn(),
    userData: supabaseStandIn(),
    extractionQueue: queue,
    supportQueue: queue,
    runsQueue: queue,
    webhooksQueue: queue,
    cronScheduler: { put: async () => undefined, remove: async () => undefined },
    files: recordingObjects(),
    dataEngine: {} as never,
    documents: { get: async () => undefined, head: async () => undefined },
    knowledge: { bucket: "docs", prefix: "kb/", objects: recordingObjects() },
  };
}

const denied = { name: "AccessDeniedException", $metadata: { httpStatusCode: 400 } };
const key = { pk: { S: "t" }, sk: { S: "session" } };

describe("a function's DynamoDB client", () => {
  it("reaches only the tables its grants name, by plain and document commands and in batches", async () => {
    const checkpointsOnly = grantedBackends(spec(["checkpoints"]), everything(), dynamo.endpoint);
    await expect(
      checkpointsOnly.dynamo.send(new GetItemCommand({ TableName: config.CHECKPOINT_TABLE, Key: key })),
    ).resolves.toBeDefined();
    const refused = checkpointsOnly.dynamo.send(new GetItemCommand({ TableName: config.IDEMPOTENCY_TABLE, Key: key }));
    await expect(refused).rejects.toMatchObject(denied);
    await expect(refused).rejects.toThrow(
      /probe is not authorized to perform dynamodb:GetItemCommand on table agent-idempotency/,
    );
    // One refused table in a batch refuses the whole request, as IAM does.
    const put = (TableName: string) => ({ [TableName]: [{ PutRequest: { Item: { ...key, id: { S: "x" } } } }] });
    await expect(
      checkpointsOnly.dynamo.send(
        new BatchWriteItemCommand({
          RequestItems: { ...put(config.CHECKPOINT_TABLE), ...put(config.IDEMPOTENCY_TABLE) },
        }),
      ),
    ).rejects.toBeInstanceOf(AccessDenied);

    const none = grantedBackends(spec(["supabase"]), everything(), dynamo.endpoint);
    const doc = DynamoDBDocumentClient.from(none.dynamo);
    await expect(
      doc.send(new GetCommand({ TableName: config.CHECKPOINT_TABLE, Key: { pk: "t", sk: "session" } })),
    ).rejects.toMatchObject(denied);
  });
});

describe("the usage grant", () => {
  it("adds to usage items and does nothing else in the checkpoint table, by plain and document commands", async () => {
    const extraction = grantedBackends(spec(["idempotency", "usage"]), everything(), dynamo.endpoint);
    const doc = DynamoDBDocumentClient.from(extraction.dynamo);
    const add = (pk: string) =>
      new UpdateCommand({
        TableName: config.CHECKPOINT_TABLE,
        Key: { pk, sk: "2026-11-28" },
        UpdateExpression: "ADD tokens :n",
        ExpressionAttributeValues: { ":n": 5 },
      });
    await expect(doc.send(add("usage#abc"))).resolves.toBeDefined();
    await expect(
      extraction.dynamo.send(
        new UpdateItemCommand({
          TableName: config.CHECKPOINT_TABLE,
          Key: { pk: { S: "usage#abc" }, sk: { S: "2026-11-28" } },
          UpdateExpression: "ADD tokens :n",
          ExpressionAttributeValues: { ":n": { N: "1" } },
        }),
      ),
    ).resolves.toBeDefined();
    // A session's items, a read of the usage item, and any other write are refused.
    await expect(doc.send(add("a-session-id"))).rejects.toBeInstanceOf(AccessDenied);
    await expect(
      doc.send(new GetCommand({ TableName: config.CHECKPOINT_TABLE, Key: { pk: "usage#abc", sk: "2026-11-28" } })),
    ).rejects.toBeInstanceOf(AccessDenied);
    await expect(
      doc.send(new PutCommand({ TableName: config.CHECKPOINT_TABLE, Item: { pk: "usage#abc", sk: "x" } })),
    ).rejects.toBeInstanceOf(AccessDenied);
  });
});

/** What the stack hands a function by environment only with a grant. */
const BY_ENVIRONMENT = [
  "extractionQueue",
  "supportQueue",
  "runsQueue",
  "webhooksQueue",
  "cronScheduler",
  "files",
  "dataEngine",
  "knowledge",
] as const;

describe("what only some functions may use", () => {
  it("leaves out, as the stack's environment does, each queue, the crons, the data function and the documents' admin side", () => {
    const bare = grantedBackends(spec([]), everything(), dynamo.endpoint);
    for (const absent of BY_ENVIRONMENT) expect(bare[absent], absent).toBeUndefined();
    const full = grantedBackends(
      spec([
        "send:extraction",
        "send:support",
        "send:runs",
        "send:webhooks",
        "crons",
        "attachments:chat",
        "invoke:data",
        "documents:admin",
      ]),
      everything(),
      dynamo.endpoint,
    );
    for (const present of BY_ENVIRONMENT) expect(full[present], present).toBeDefined();
    // The data function's name comes with the bucket only (awsBackends).
    expect(grantedBackends(spec(["invoke:data"]), everything(), dynamo.endpoint).dataEngine).toBeUndefined();
  });

  it("lets a function that may only remove crons' schedules remove them, and make none", async () => {
    const removed: string[] = [];
    const all = {
      ...everything(),
      cronScheduler: { put: async () => {}, remove: async (id: string) => void removed.push(id) },
    };
    const { cronScheduler } = grantedBackends(spec(["crons:remove"]), all, dynamo.endpoint);
    await cronScheduler!.remove("c1");
    expect(removed).toEqual(["c1"]);
    await expect(
      cronScheduler!.put({ cronId: "c2", userId: "u", schedule: "0 9 * * *", enabled: true }),
    ).rejects.toMatchObject(denied);
  });

  it("refuses Supabase and the documents to a function told of them without the grant", async () => {
    const bare = grantedBackends(spec([]), everything(), dynamo.endpoint);
    await expect(bare.conversations!.deleteSession("s", "u")).rejects.toMatchObject(denied);
    await expect(bare.userData!.export("u")).rejects.toThrow(/needs the supabase grant/);
    await expect(bare.documents!.get("b", "k", 1)).rejects.toThrow(/needs the documents grant/);
    const granted = grantedBackends(spec(["supabase", "documents"]), everything(), dynamo.endpoint);
    await expect(granted.conversations!.deleteSession("s", "u")).resolves.toBe(1);
    await expect(granted.documents!.get("b", "k", 1)).resolves.toBeUndefined();
  });
});

describe("a bucket's objects", () => {
  const file = "users/u/sessions/s/f";
  const attempts = (objects: FileObjects) => ({
    uploadUrl: () => objects.uploadUrl(file, "text/csv", 1, 60),
    downloadUrl: () => objects.downloadUrl(file, "f.csv", 60),
    read: () => objects.read(file),
    write: () => objects.write(file, new Uint8Array(1), "image/png"),
    delete: () => objects.delete([file]),
    deleteUnder: () => objects.deleteUnder("users/u/"),
  });
  const allowed = async (grants: Grant[]) => {
    const objects = grantedBackends(spec(grants), everything(), dynamo.endpoint).files!;
    const ok: string[] = [];
    for (const [method, attempt] of Object.entries(attempts(objects)))
      await attempt().then(
        () => ok.push(method),
        (err) => expect(err).toBeInstanceOf(S3AccessDenied),
      );
    return ok;
  };

  it("allows each attachments grant exactly its actions", async () => {
    // Listing comes with reading (a missing key then reads as missing), so deleting under a prefix does too.
    const every = ["uploadUrl", "downloadUrl", "read", "write", "delete", "deleteUnder"];
    expect(await allowed(["attachments"])).toEqual(every);
    expect(await allowed(["attachments:chat"])).toEqual(["uploadUrl", "downloadUrl", "read", "write"]);
    expect(await allowed(["attachments:delete"])).toEqual(["delete"]);
    expect(await allowed(["attachments:read"])).toEqual(["downloadUrl", "read"]);
    expect(await allowed(["attachments:erase"])).toEqual(["downloadUrl", "read", "delete", "deleteUnder"]);
    expect(await allowed(["attachments:chat", "attachments:delete"])).toEqual(every);
  });

  it("holds each grant to its keys: users/ only, and an erasure writes only exports", async () => {
    const all = everything();
    const files = grantedBackends(spec(["attachments"]), all, dynamo.endpoint).files!;
    await expect(files.read("elsewhere/f")).rejects.toThrow(/s3:GetObject on elsewhere\/f/);
    // A delete of many keys is refused whole when one is outside.
    await expect(files.delete([file, "other/f"])).rejects.toBeInstanceOf(S3AccessDenied);
    const erase = grantedBackends(spec(["attachments:erase"]), all, dynamo.endpoint).files!;
    await expect(erase.write("users/u/exports/e.json", new Uint8Array(1), "application/json")).resolves.toBeUndefined();
    await expect(erase.write(file, new Uint8Array(1), "text/csv")).rejects.toBeInstanceOf(S3AccessDenied);
    await expect(erase.deleteUnder("")).rejects.toBeInstanceOf(S3AccessDenied);
    // Only what was allowed reached the bucket.
    expect(all.files.calls).toEqual(["write users/u/exports/e.json"]);
  });

  it("gives the knowledge admin routes presigned uploads and deletes under the documents' prefix, nothing else", async () => {
    const all = everything();
    const { objects } = grantedBackends(spec(["documents:admin"]), all, dynamo.endpoint).knowledge!;
    await objects.uploadUrl("kb/a.md", "text/markdown", 1, 60);
    await objects.delete(["kb/a.md"]);
    await expect(objects.read("kb/a.md")).rejects.toBeInstanceOf(S3AccessDenied);
    await expect(objects.delete(["other/a.md"])).rejects.toBeInstanceOf(S3AccessDenied);
    expect((all.knowledge!.objects as ReturnType<typeof recordingObjects>).calls).toEqual([
      "uploadUrl kb/a.md",
      "delete kb/a.md",
    ]);
  });
});

describe("a read of a key that is not there", () => {
  it("is missing to a caller that may list the bucket, and AccessDenied (403) to one that may not, as S3 answers", async () => {
    const get = { action: "s3:GetObject", keys: "users/*" };
    const list = { action: "s3:ListBucket", keys: "*" };
    const missing = "users/u/missing";
    await expect(heldTo(recordingObjects(), [get, list], "probe").read(missing)).resolves.toBeUndefined();
    await expect(heldTo(recordingObjects(), [get], "probe").read(missing)).rejects.toMatchObject({
      name: "AccessDenied",
      $metadata: { httpStatusCode: 403 },
    });
    // A key that is there reads the same either way.
    await expect(heldTo(recordingObjects(), [get], "probe").read("users/u/f")).resolves.toEqual(new Uint8Array(1));
    // The files and chat grants list the bucket, so their reads of missing keys are missing; the data
    // function's does not list (infra/grants.ts).
    // Nor the erasure's: its listing is held to the users/ prefix, which a GetObject carries none of.
    for (const grant of ["attachments:read", "attachments:erase"] as const)
      await expect(
        grantedBackends(spec([grant]), everything(), dynamo.endpoint).files!.read(missing),
      ).rejects.toBeInstanceOf(S3AccessDenied);
    for (const grant of ["attachments", "attachments:chat"] as const)
      await expect(
        grantedBackends(spec([grant]), everything(), dynamo.endpoint).files!.read(missing),
      ).resolves.toBeUndefined();
  });
});
