import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";

/**
 * The stack `npm start` runs, for one test file: a fresh data folder, a free port, quiet logs;
 * started before the file's tests and closed (its folder removed) after them. Read `.stack`
 * inside tests; `.dataDir` is its DATA_DIR. For a file that needs settings of its own, or a stack
 * no other file touches (restarts, the knowledge base's contents, queue depths).
 */
export function localStackForTests(
  name: string,
  env: Record<string, string> = {},
): { stack: LocalStack; dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const holder = { dataDir } as { stack: LocalStack; dataDir: string };
  beforeAll(async () => {
    holder.stack = await startLocalStack({ DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "SILENT", ...env });
  }, 60_000);
  afterAll(async () => {
    await holder.stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return holder;
}

const SHARED = Symbol.for("agent-tests.shared-local-stack");

/**
 * One local stack for every e2e file of a worker that needs only users of its own (see
 * `freshUser`): the e2e tier shares its module graph within a worker (vitest.config.ts), so the
 * stack, started by the first such file, serves the next ones instead of a boot each. It ends with
 * the worker; its data folder is in the run's temp folder, removed when the run ends.
 */
export function sharedLocalStack(): { stack: LocalStack } {
  const holder = {} as { stack: LocalStack };
  beforeAll(async () => {
    const scope = globalThis as { [SHARED]?: Promise<LocalStack> };
    scope[SHARED] ??= startLocalStack({
      DATA_DIR: mkdtempSync(join(tmpdir(), "shared-stack-")),
      PORT: "0",
      LOG_LEVEL: "SILENT",
    });
    holder.stack = await scope[SHARED];
  }, 60_000);
  return holder;
}

/** A user id no other test file uses, for files on the shared stack. */
export const freshUser = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

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
