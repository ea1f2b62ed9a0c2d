import { PutItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCheckpointTable } from "../../../graph/checkpoint";
import { startLocalDynamo } from "../../../infra/local/dynamo";

// dynalite 4.0.0 closes its LevelDB iterators with `iterator.return()`, which abstract-level 3's
// iterators do not have (theirs is `close()`): every Query left one open for the life of the
// process, and `npm start` grew without bound. infra/local/patches/ fixes it at install time.

// dynalite's own copy of abstract-level, whatever npm hoisted.
const levelOfDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"))("abstract-level") as {
  AbstractLevel: { prototype: { attachResource(r: unknown): void; detachResource(r: unknown): void } };
};

describe("the local DynamoDB (dynalite) on disk", () => {
  it("closes the iterator behind every Query, so a long run holds none open", async () => {
    const proto = levelOfDynalite.AbstractLevel.prototype;
    const attach = proto.attachResource;
    const detach = proto.detachResource;
    let open = 0;
    proto.attachResource = function (this: unknown, r: unknown) {
      open++;
      return attach.call(this, r);
    };
    proto.detachResource = function (this: unknown, r: unknown) {
      open--;
      return detach.call(this, r);
    };
    const dir = mkdtempSync(join(tmpdir(), "dynalite-"));
    const dynamo = await startLocalDynamo({ path: dir });
    try {
      await createCheckpointTable(dynamo.client, "iterators");
      for (let i = 0; i < 5; i++)
        await dynamo.client.send(
          new PutItemCommand({ TableName: "iterators", Item: { pk: { S: "p" }, sk: { S: `s${i}` } } }),
        );
      const before = open;
      for (let i = 0; i < 200; i++)
        await dynamo.client.send(
          new QueryCommand({
            TableName: "iterators",
            KeyConditionExpression: "pk = :p",
            ExpressionAttributeValues: { ":p": { S: "p" } },
            ...(i % 2 ? { Limit: 2 } : {}),
          }),
        );
      // Resources still attached after the queries: none of theirs (a little slack for any in flight).
      expect(open - before).toBeLessThanOrEqual(2);
    } finally {
      proto.attachResource = attach;
      proto.detachResource = detach;
      await dynamo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
