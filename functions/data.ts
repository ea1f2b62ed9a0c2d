import { runEngineRequest, type ReadObject } from "../shared/files/data-core";
import type { EngineAnswer, EngineRequest, TableRef } from "../shared/files/data-engine";
import { parseObjectKey } from "../shared/files/keys";
import { awsWiring, type Wiring } from "../shared/wiring";

/**
 * The data function: DuckDB over a session's data files, invoked (never routed) by the functions
 * that inspect uploads and run the data tools (shared/files/lambda-engine.ts). It is the only
 * function that ships DuckDB's native binding, on the architecture that binding is built for, and
 * its role reads the attachments bucket's users/ prefix and nothing else: a parser bug or a sandbox
 * escape in the engine holds no table, secret, model or queue. Locally a worker pool stands in for
 * it (infra/local/data-worker.ts), running the same runEngineRequest.
 */
export function createDataHandler(read: () => Promise<ReadObject>) {
  return async (request: EngineRequest): Promise<EngineAnswer> => {
    const keys =
      request.op === "inspect"
        ? [request.key]
        : request.op === "describe"
          ? [request.table.key]
          : (request.tables ?? []).map((t: TableRef) => t.key);
    // Only objects this API made: the role could read any user's, the caller names whose.
    const foreign = keys.find((key) => !parseObjectKey(String(key)));
    if (foreign !== undefined)
      return { ok: false, error: "sql", message: "a data file's key is not one of this API's" };
    return runEngineRequest(request, await read());
  };
}

/** On any wiring: the bucket's objects, as the backends read them. */
export const createHandler = ({ backends }: Wiring) =>
  createDataHandler(async () => {
    const { files } = await backends();
    if (!files) throw new Error("the data function needs ATTACHMENTS_BUCKET");
    return (key) => files.read(key);
  });

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
