// `npm start`: the whole system on this machine, on embedded stand-ins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
// No CloudWatch locally: metrics stay off unless asked for.
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";

import { startLocalStack } from "./stack";

const stack = await startLocalStack();
for (const line of stack.describe) console.log(line);
console.log(`ready: try  curl -s ${stack.url}/api/chat -d '{"message":"hi"}'`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  await stack.close();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
