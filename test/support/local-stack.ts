import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";

/**
 * The stack `npm start` runs, for one test file: a fresh data folder, a free port, quiet logs;
 * started before the file's tests and closed (its folder removed) after them. Read `.stack`
 * inside tests.
 */
export function localStackForTests(name: string, env: Record<string, string> = {}): { stack: LocalStack } {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const holder = {} as { stack: LocalStack };
  beforeAll(async () => {
    holder.stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT", ...env });
  }, 60_000);
  afterAll(async () => {
    await holder.stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return holder;
}

/** A DynamoDB client on a local stack's dynalite, and its checkpoint table, read from the stack's description. */
export function localStackDynamo(stack: LocalStack): { client: DynamoDBClient; table: string } {
  const [, endpoint, table] = /dynalite \(local stand-in\) at (\S+), table (\S+)/.exec(stack.describe.join("\n"))!;
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  return { client, table: table! };
}

/** A local stack's data folder (DATA_DIR), from its description. */
export const localStackDataDir = (stack: LocalStack) => /^data: (.*)$/m.exec(stack.describe.join("\n"))![1]!;
