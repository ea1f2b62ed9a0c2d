import { InvokeCommand, LambdaClient, LambdaServiceException, type InvokeCommandOutput } from "@aws-sdk/client-lambda";
import { engineClient, type DataEngine, type EngineAnswer } from "./data-engine";
import { SqlBusy, SqlError } from "./sql-errors";

/**
 * The data function (functions/data.ts) by Lambda Invoke: the only function that ships DuckDB,
 * with a role that reads attachments and nothing else. Whatever goes wrong with the invocation
 * (the function failed or ran out of time or memory, Lambda throttled it, the payload was too
 * large) is a SqlError, an answer the model reads, never a failed turn.
 */
export function lambdaDataEngine(functionName: string, client = new LambdaClient({})): DataEngine {
  return engineClient(async (request): Promise<EngineAnswer> => {
    let out: InvokeCommandOutput;
    try {
      out = await client.send(
        new InvokeCommand({ FunctionName: functionName, Payload: new TextEncoder().encode(JSON.stringify(request)) }),
      );
    } catch (err) {
      throw invokeError(err);
    }
    const text = out.Payload ? new TextDecoder().decode(out.Payload) : "";
    if (out.FunctionError) {
      // Lambda's own error document: { errorType, errorMessage } (a timeout, running out of memory).
      const reason = parsed(text)?.errorMessage;
      throw new SqlError(
        `the data engine failed on this request${typeof reason === "string" ? `: ${reason.slice(0, 300)}` : ""}`,
      );
    }
    const answer = parsed(text);
    if (!answer || typeof answer.ok !== "boolean") throw new SqlError("the data engine gave no answer");
    return answer as EngineAnswer;
  });
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** An Invoke that failed, by Lambda's error name, as the model should read it. */
function invokeError(err: unknown): SqlError {
  const name = err instanceof LambdaServiceException ? err.name : undefined;
  if (name === "TooManyRequestsException") return new SqlBusy();
  if (name === "RequestTooLargeException")
    return new SqlError("the query is too large to send to the data engine; send a shorter one");
  return new SqlError(`the data engine could not be reached (${name ?? "network error"}); try again in a moment`);
}
