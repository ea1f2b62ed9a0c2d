import { GraphRecursionError } from "@langchain/langgraph";
import { AppError } from "../../shared/errors";

/** Marks a failure of the model call, so it is told apart from a state-store failure. */
export class ModelError extends Error {
  constructor(cause: unknown) {
    super(`model call failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "ModelError";
  }
}

/** Bedrock errors that mean "try again later" rather than "this request is wrong". */
const TRANSIENT = new Set([
  "ThrottlingException",
  "ServiceUnavailableException",
  "ServiceQuotaExceededException",
  "ModelNotReadyException",
  "InternalServerException",
  "ModelTimeoutException",
]);

/** Maps what a graph run threw to the client-facing error. */
export function agentFailure(err: unknown, recursionLimit: number): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof GraphRecursionError) {
    return new AppError(500, "agent_step_limit", `the agent did not finish within ${recursionLimit} steps`, {
      cause: err,
    });
  }
  if (err instanceof ModelError) {
    const name = (err.cause as { name?: string })?.name ?? "";
    return TRANSIENT.has(name)
      ? new AppError(503, "model_unavailable", "the model is busy or unavailable; try again shortly", { cause: err })
      : new AppError(502, "model_error", "the model call failed", { cause: err });
  }
  return new AppError(503, "state_unavailable", "the conversation state could not be read or saved", { cause: err });
}
