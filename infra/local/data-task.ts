import { existsSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { runEngineRequest } from "../../shared/files/data-core";
import type { EngineAnswer, EngineRequest } from "../../shared/files/data-engine";

/**
 * One data engine request on a worker of the local pool (data-worker.ts), reading objects from the
 * local attachments folder as the data function reads them from the bucket.
 */
export default async function dataTask({
  request,
  dir,
}: {
  request: EngineRequest;
  dir: string;
}): Promise<EngineAnswer> {
  const root = resolve(dir);
  return runEngineRequest(request, async (key) => {
    const path = resolve(join(root, key));
    // A key is the server's own (shared/files/keys.ts); still, never read outside the folder.
    if (!path.startsWith(root + sep) || !existsSync(path)) return undefined;
    return new Uint8Array(readFileSync(path));
  });
}
