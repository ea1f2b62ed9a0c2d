// The local stack: `npm start`. Runs the production code paths on embedded stand-ins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createCheckpointTable } from "../../graph/checkpoint";
import { loadConfig } from "../../shared/config";
import { startLocalDynamo } from "./dynamo";

const config = loadConfig();
const dataDir = resolve(config.DATA_DIR);
mkdirSync(dataDir, { recursive: true });

const dynamo = await startLocalDynamo({ path: join(dataDir, "dynamodb") });
await createCheckpointTable(dynamo.client, config.CHECKPOINT_TABLE);
console.log(
  `dynamodb: dynalite (local stand-in) at ${dynamo.endpoint}, table ${config.CHECKPOINT_TABLE}, data in ${dataDir}`,
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  await dynamo.close();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
