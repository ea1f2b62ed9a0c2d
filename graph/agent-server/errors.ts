import { AppError, badRequest, notFound } from "../../shared/errors";
import { errorBody, json } from "../../shared/http";

/**
 * The Agent Server API's errors as LangGraph's own server words them, so a client written against
 * it (the SDK surfaces `HTTP <status>: <body>`) meets the same statuses and texts; the project's
 * stable codes stay beside them.
 */
export const threadNotFound = (threadId: string | undefined) =>
  notFound("thread_not_found", `Thread with ID ${String(threadId).slice(0, 64)} not found`);
export const assistantNotFound = () => notFound("assistant_not_found", "Assistant not found");
/** A run naming an assistant that is neither a graph nor one of the caller's assistants. */
export const noAssistantFor = (assistantId: string) =>
  notFound(
    "assistant_not_found",
    `No assistant found for "${assistantId.slice(0, 128)}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
  );
export const malformedId = (name: string) => badRequest(`invalid_${name}`, `${name}: must be a UUID`);
export const threadBusyForRun = () =>
  new AppError(
    422,
    "thread_busy",
    "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
  );
export const threadBusy = () => new AppError(409, "thread_busy", "Thread is busy");

/** The project's error, in the Agent Server's wording where it has one for it. */
function asAgentServer(err: AppError): AppError {
  // A run refused because another holds the thread (multitask_strategy "reject").
  if (err.code === "session_busy" && err.status === 409 && /still being answered/.test(err.message))
    return threadBusyForRun();
  if (err.code === "session_not_found") return new AppError(404, "thread_not_found", "Thread not found");
  return err;
}

/**
 * An error's body: `detail` (what LangGraph's servers answer, first so the SDK's message starts with
 * it) beside the project's `{"error":{"code","message"}}`.
 */
export function agentServerErrorResponse(error: AppError, headers: Record<string, string> = {}) {
  const err = asAgentServer(error);
  // The error's own headers too: a quota's 429 carries Retry-After.
  return json(
    err.status,
    { detail: err.message, ...errorBody(err.code, err.message, err.details) },
    { ...error.headers, ...headers },
  );
}
export const agentServerErrorStatus = (error: AppError) => asAgentServer(error).status;
