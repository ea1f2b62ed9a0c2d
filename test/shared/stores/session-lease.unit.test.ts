import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { CHECKPOINT_TABLE } from "../../../shared/stores/checkpoint-table";
import { LeaseLost, RunCancelled, SessionLeases } from "../../../shared/stores/session-lease";

let dynamo: LocalDynamo;
const table = "leases";
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

/** Another process's lease item on the session, held for this long from now. */
const writeLease = (session: string, token: string, forMs: number) =>
  dynamo.client.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        pk: { S: session },
        sk: { S: "lease" },
        token: { S: token },
        lease_until: { N: String(Date.now() + forMs) },
      },
    }),
  );

describe("session lease", () => {
  it("admits one holder at a time and frees the session on release", async () => {
    const leases = new SessionLeases(dynamo.client, table);
    const session = randomUUID();
    const first = await leases.tryAcquire(session);
    expect(first).toBeDefined();
    expect(await leases.tryAcquire(session)).toBeUndefined();
    expect(await leases.tryAcquire(randomUUID())).toBeDefined(); // other sessions are unaffected
    await first!.release();
    expect(await leases.tryAcquire(session)).toBeDefined();
  });

  it("waits for a busy session when asked, within a bound", async () => {
    const leases = new SessionLeases(dynamo.client, table);
    const session = randomUUID();
    const held = await leases.tryAcquire(session);
    setTimeout(() => void held!.release(), 200);
    const started = Date.now();
    const waited = await leases.acquire(session, 5000);
    expect(waited).toBeDefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(await leases.acquire(session, 100)).toBeUndefined();
    await waited!.release();
  });

  it("is renewed while its run is alive: a run outliving the initial lease keeps it", async () => {
    const leases = new SessionLeases(dynamo.client, table, 300);
    const session = randomUUID();
    const held = await leases.tryAcquire(session);
    expect(held).toBeDefined();
    // Three lease lengths later, a second run still finds the session taken.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 300));
      expect(await leases.tryAcquire(session)).toBeUndefined();
    }
    expect(held!.signal.aborted).toBe(false);
    await held!.release();
    expect(await leases.tryAcquire(session)).toBeDefined();
  });

  it("is taken over only once a crashed holder's lease has expired", async () => {
    const session = randomUUID();
    // A crashed process: its lease item is there, its heartbeat is not.
    await writeLease(session, "crashed", 200);
    const leases = new SessionLeases(dynamo.client, table, 300);
    expect(await leases.tryAcquire(session)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 250));
    const next = await leases.tryAcquire(session);
    expect(next).toBeDefined();
    await next!.release();
  });

  it("aborts its signal when another run has taken it (a renewal that finds another token)", async () => {
    const leases = new SessionLeases(dynamo.client, table, 300);
    const session = randomUUID();
    const held = await leases.tryAcquire(session);
    // Someone else's lease, as after a long pause of this process.
    await writeLease(session, "other", 60_000);
    await new Promise((r) => setTimeout(r, 250));
    expect(held!.signal.aborted).toBe(true);
    await held!.release(); // leaves the other holder's lease alone
    expect(await leases.tryAcquire(session)).toBeUndefined();
  });

  it("says so when its renewals could not reach the table for a whole lease, rather than that another run took it", async () => {
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      maxAttempts: 1,
    });
    let down = false;
    client.middlewareStack.add(
      (next) => async (args) => {
        if (down) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        return next(args);
      },
      { step: "initialize" },
    );
    const leases = new SessionLeases(client, table, 300);
    const held = await leases.tryAcquire(randomUUID());
    down = true;
    await new Promise((r) => setTimeout(r, 450));
    expect(held!.signal.aborted).toBe(true);
    expect(held!.signal.reason).toBeInstanceOf(LeaseLost);
    expect((held!.signal.reason as LeaseLost).unrenewed).toBe(true);
    client.destroy();
  });

  it("carries a cancel request to its holder through the heartbeat, and holds on until released", async () => {
    const leases = new SessionLeases(dynamo.client, table, 150);
    const session = randomUUID();
    expect(await leases.requestCancel(session, "interrupt")).toBe(false); // nobody runs: nothing to stop
    const held = await leases.tryAcquire(session);
    expect(await leases.requestCancel(session, "rollback")).toBe(true);
    await new Promise<void>((resolve) => held!.signal.addEventListener("abort", () => resolve()));
    expect(held!.signal.reason).toBeInstanceOf(RunCancelled);
    expect((held!.signal.reason as RunCancelled).action).toBe("rollback");
    // Still held (the stopped run may tidy up first); the next lease is a new item, without the flag.
    expect(await leases.tryAcquire(session)).toBeUndefined();
    await held!.release();
    const next = await leases.tryAcquire(session);
    await new Promise((r) => setTimeout(r, 200)); // past a heartbeat
    expect(next!.signal.aborted).toBe(false);
    await next!.release();
  });
});

describe("a release carrying another update (ReleaseOptions.alongside)", () => {
  const doc = () => DynamoDBDocumentClient.from(dynamo.client);
  const counter = (pk: string) => ({ pk, sk: "counter" });
  const count = async (pk: string) =>
    (await doc().send(new GetCommand({ TableName: table, Key: counter(pk), ConsistentRead: true }))).Item?.n;
  const adding = (pk: string, n: number, below?: number) => ({
    TableName: table,
    Key: counter(pk),
    UpdateExpression: "ADD n :n",
    ...(below !== undefined ? { ConditionExpression: "attribute_not_exists(n) OR n < :max" } : {}),
    ExpressionAttributeValues: { ":n": n, ...(below !== undefined ? { ":max": below } : {}) },
  });
  /** The requests sent about `session`'s items (other tests' leases may still be renewing theirs). */
  const sends = (session: string) => {
    const sent: string[] = [];
    dynamo.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (JSON.stringify(args.input).includes(session)) sent.push(context.commandName ?? "");
        return next(args);
      },
      { step: "initialize", name: "count-sends" },
    );
    return sent;
  };
  afterEach(() => void dynamo.client.middlewareStack.remove("count-sends"));

  it("lets the lease go and writes the update in one request", async () => {
    const leases = new SessionLeases(dynamo.client, table);
    const session = randomUUID();
    const lease = (await leases.tryAcquire(session))!;
    const sent = sends(session);
    await lease.release({ alongside: { update: adding(session, 3) } });
    expect(sent).toEqual(["TransactWriteItemsCommand"]);
    expect(await count(session)).toBe(3);
    expect(await leases.tryAcquire(session)).toBeDefined();
  });

  it("writes the update on its own when the lease is no longer its holder's, and leaves the new holder's lease alone", async () => {
    const leases = new SessionLeases(dynamo.client, table, 50);
    const session = randomUUID();
    const lease = (await leases.tryAcquire(session))!;
    await writeLease(session, "another-run", 60_000);
    await lease.release({ alongside: { update: adding(session, 2) } });
    expect(await count(session)).toBe(2);
    const item = await doc().send(
      new GetCommand({ TableName: table, Key: { pk: session, sk: "lease" }, ConsistentRead: true }),
    );
    expect(item.Item?.token).toBe("another-run");
  });

  it("writes the update's `otherwise` with the release when the update's own condition does not hold", async () => {
    const leases = new SessionLeases(dynamo.client, table);
    const session = randomUUID();
    await doc().send(new UpdateCommand(adding(session, 10)));
    const lease = (await leases.tryAcquire(session))!;
    await lease.release({ alongside: { update: adding(session, 5, 10), otherwise: adding(session, 1) } });
    expect(await count(session)).toBe(11);
    expect(await leases.tryAcquire(session)).toBeDefined();
  });
});

describe("a cancel naming its run (SessionOwners, the owner record's lease)", () => {
  it("marks the lease only while that run holds it: never another run's, nor a later holder with no run", async () => {
    const { SessionOwners } = await import("../../../shared/stores/session-owners");
    const owners = new SessionOwners(dynamo.client, table, 1, 150);
    const session = randomUUID();
    const settings = { memory: true, private: false, tools: {} } as never;
    const a = (await owners.claimLeased(session, "u", null, settings, { runId: "run-a" })).lease!;
    expect(await owners.requestCancel(session, "u", "interrupt", "run-b")).toBe(false);
    await a.release();
    // The next holder is an /api/chat turn (no run): a cancel naming the earlier run finds nothing.
    const turn = (await owners.lease(session, "u")).lease!;
    expect(await owners.requestCancel(session, "u", "interrupt", "run-a")).toBe(false);
    await new Promise((r) => setTimeout(r, 200)); // past a heartbeat
    expect(turn.signal.aborted).toBe(false);
    await turn.release();
    const b = (await owners.lease(session, "u", { runId: "run-b" })).lease!;
    expect(await owners.requestCancel(session, "u", "interrupt", "run-b")).toBe(true);
    await new Promise<void>((resolve) => b.signal.addEventListener("abort", () => resolve()));
    expect(b.signal.reason).toBeInstanceOf(RunCancelled);
    await b.release();
  });
});

describe("a session's owner record", () => {
  it("is kept alive by its owner's reads, unless its deletion began (those reads answer 404)", async () => {
    const { SessionOwners } = await import("../../../shared/stores/session-owners");
    const owners = new SessionOwners(dynamo.client, table, 1);
    const doc = DynamoDBDocumentClient.from(dynamo.client);
    const expiry = async (session: string) =>
      (await doc.send(new GetCommand({ TableName: table, Key: { pk: session, sk: "session" }, ConsistentRead: true })))
        .Item?.[CHECKPOINT_TABLE.ttlAttribute];
    const soon = Math.floor(Date.now() / 1000) + 60;
    for (const deleting of [false, true]) {
      const session = randomUUID();
      await owners.claim(session, "u");
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: session, sk: "session" },
          UpdateExpression: `SET #e = :soon${deleting ? ", deleting = :t" : ""}`,
          ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute },
          ExpressionAttributeValues: { ":soon": soon, ...(deleting ? { ":t": true } : {}) },
        }),
      );
      await owners.session(session, "u");
      if (deleting) expect(await expiry(session)).toBe(soon);
      else expect(await expiry(session)).toBeGreaterThan(soon);
    }
  });
});
