import { slots } from "../../../shared/files/slots";
import { SqlBusy } from "../../../shared/files/sql-errors";

it("hands out at most its concurrency, and a wait past its time is busy", async () => {
  const gate = slots(1);
  const release = await gate.take(1_000);
  await expect(gate.take(5)).rejects.toBeInstanceOf(SqlBusy);
  release();
  const next = await gate.take(1_000);
  next();
});

// p-limit keeps a wait that gave up in its queue until a slot reaches it: counted as waiting, it
// made the local engine refuse new requests as busy while nobody was waiting.
it("counts only the requests still waiting", async () => {
  const gate = slots(1);
  const release = await gate.take(1_000);
  const gaveUp = [gate.take(1), gate.take(1)].map((p) => p.catch((err: unknown) => err));
  expect(gate.waiting).toBe(2);
  await Promise.all(gaveUp);
  expect(gate.waiting).toBe(0);
  const waiting = gate.take(1_000);
  expect(gate.waiting).toBe(1);
  release();
  (await waiting)();
  expect(gate.waiting).toBe(0);
});
