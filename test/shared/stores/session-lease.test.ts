import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { SessionLeases } from "../../../shared/stores/session-lease";

let dynamo: LocalDynamo;
const table = "leases";
beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await createCheckpointTable(dynamo.client, table);
});
afterAll(() => dynamo.close());

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

  it("is stolen only once expired, and the old holder's release then leaves the new lease alone", async () => {
    const shortLeases = new SessionLeases(dynamo.client, table, 100);
    const session = randomUUID();
    const crashed = await shortLeases.tryAcquire(session);
    expect(await shortLeases.tryAcquire(session)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 150));
    const next = await shortLeases.tryAcquire(session);
    expect(next).toBeDefined();
    await crashed!.release();
    expect(await shortLeases.tryAcquire(session)).toBeUndefined();
    await next!.release();
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
});
