import type { APIGatewayProxyEvent } from "aws-lambda";
import { AppError } from "../../shared/errors";
import { parseJsonBody } from "../../shared/http";
import { MAX_REQUEST_BYTES, RunCreate } from "./requests";
import { checkRun, type RunDeps } from "./runs";
import type { ThreadService } from "./threads";

/** The run routes whose body may ask for the thread to be made (`if_not_exists: "create"`). */
const RUN_ROUTES = new Set([
  "POST /threads/{thread_id}/runs",
  "POST /threads/{thread_id}/runs/wait",
  "POST /threads/{thread_id}/runs/stream",
]);

/**
 * Ownership before effect, for a route naming a thread: first, before anything is parsed, read,
 * written or cancelled, for anyone but its owner. A run asking for its thread to be made when it
 * does not exist makes it the caller's, only if nobody has it (a conditional put): anyone else's
 * thread stays 404. The run is checked first (its body, its assistant, its input, its webhook),
 * so a run that is refused leaves no thread behind.
 */
export async function guardThread(
  { threads, runDeps }: { threads: ThreadService; runDeps: RunDeps },
  userId: string,
  event: APIGatewayProxyEvent,
) {
  const threadId = event.pathParameters?.thread_id;
  try {
    // A thread's deletion still finds one whose earlier deletion stopped part-way, to finish it.
    await threads.assertOwned(userId, threadId, {
      toDelete: event.httpMethod === "DELETE" && event.resource === "/threads/{thread_id}",
    });
  } catch (err) {
    const key = `${event.httpMethod} ${event.resource}`;
    if (!(err instanceof AppError && err.status === 404 && RUN_ROUTES.has(key) && asksToCreate(event.body))) throw err;
    const run = parseJsonBody(event, RunCreate, { maxBytes: MAX_REQUEST_BYTES });
    await checkRun(runDeps, userId, run);
    await threads.createIfAbsent(userId, threadId!, run.config?.configurable?.project_id ?? null);
  }
}

function asksToCreate(body: string | null): boolean {
  try {
    return (JSON.parse(body ?? "null") as { if_not_exists?: unknown } | null)?.if_not_exists === "create";
  } catch {
    return false;
  }
}
