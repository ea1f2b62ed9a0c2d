import { randomUUID } from "node:crypto";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { CHECKPOINT_TABLE } from "../../../shared/stores/checkpoint-table";
import { createTable } from "../../../shared/stores/create-table";
import { SessionOwners } from "../../../shared/stores/session-owners";
import { meter } from "../../support/dynamo-meter";

// How export and erasure find a user's sessions: through the state table's user index, reading
// only that user's owner records however large the table; on a table without the index (a local
// one made before it, or one whose index is still being built) the same answer by a Scan.

let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startLocalDynamo();
});
afterAll(() => dynamo.close());

async function fill(owners: SessionOwners, users: string[], perUser: number) {
  const made = new Map<string, string[]>();
  for (const user of users)
    for (let i = 0; i < perUser; i++) {
      const id = randomUUID();
      expect(await owners.claim(id, user)).toBe(true);
      made.set(user, [...(made.get(user) ?? []), id]);
    }
  return made;
}

describe("a user's sessions", () => {
  it("are read from the user index: one Query of that user's owner records, no Scan", async () => {
    const table = `by-user-${randomUUID()}`;
    await createCheckpointTable(dynamo.client, table);
    const owners = new SessionOwners(dynamo.client, table);
    const made = await fill(owners, ["ann", "bob", "cy"], 5);
    const m = meter(dynamo.client);
    try {
      expect((await owners.sessionsOf("bob")).sort()).toEqual(made.get("bob")!.sort());
      expect(await owners.sessionsOf("nobody")).toEqual([]);
      expect(m.byCommand).toEqual({ QueryCommand: 2 });
    } finally {
      m.detach();
    }
  });

  it("are found by a Scan on a table without the index, the same ones", async () => {
    const table = `no-index-${randomUUID()}`;
    const { userIndex: _index, ...withoutIndex } = CHECKPOINT_TABLE;
    await createTable(dynamo.client, table, withoutIndex);
    const owners = new SessionOwners(dynamo.client, table);
    const made = await fill(owners, ["ann", "bob"], 3);
    const m = meter(dynamo.client);
    try {
      expect((await owners.sessionsOf("ann")).sort()).toEqual(made.get("ann")!.sort());
      expect(m.byCommand.ScanCommand).toBe(1);
    } finally {
      m.detach();
    }
  });
});
