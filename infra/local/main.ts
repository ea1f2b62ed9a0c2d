// `npm start`: the whole system on this machine, on embedded stand-ins.
import "./env";

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
