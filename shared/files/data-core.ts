import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  answerOfError,
  engineClient,
  type DataEngine,
  type EngineAnswer,
  type EngineRequest,
  type TableRef,
} from "./data-engine";
import { inspectData } from "./data-inspect";
import { textOf } from "./inspect";
import { SqlError, SqlSandbox, type SqlLimits } from "./sql-sandbox";
import { scratchDir } from "./scratch";

/** Reads an object's bytes by key (the attachments bucket, or the local folder standing in for it). */
export type ReadObject = (key: string) => Promise<Uint8Array | undefined>;

/**
 * Answers one engine request where DuckDB is: in the data function (functions/data.ts), in a
 * local worker (infra/local/data-task.ts) or in this process (tests, the bench's baseline).
 */
export async function runEngineRequest(request: EngineRequest, read: ReadObject): Promise<EngineAnswer> {
  try {
    switch (request.op) {
      case "inspect": {
        const bytes = await read(request.key);
        if (!bytes) throw new SqlError(`no object was uploaded for ${request.name}`);
        return { ok: true, value: await inspectData(bytes, request, request.maxRows, request.limits) };
      }
      case "describe": {
        const { table } = request;
        return { ok: true, value: await withTables([table], read, request.limits, (s) => s.describe(table.name)) };
      }
      case "query":
        return { ok: true, value: await withTables(request.tables, read, request.limits, (s) => s.query(request.sql)) };
      default:
        throw new SqlError(`unknown request ${(request as { op?: unknown }).op}`);
    }
  } catch (err) {
    return answerOfError(err);
  }
}

/**
 * Opens the sandbox over the data files, copied to a private temporary folder (the engine reads
 * local files; in Lambda the objects come from S3), and removes it after. A file whose object is
 * gone is left out.
 */
async function withTables<T>(
  tables: TableRef[],
  read: ReadObject,
  limits: SqlLimits,
  use: (s: SqlSandbox) => Promise<T>,
) {
  const dir = scratchDir("data-files-");
  try {
    const loaded = [];
    for (const [i, t] of tables.entries()) {
      const bytes = await read(t.key);
      if (!bytes) continue;
      const path = join(dir, String(i));
      writeFileSync(path, textOf(bytes, t.encoding));
      loaded.push({ name: t.name, path, format: t.format });
    }
    return await SqlSandbox.run(loaded, limits, use);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The engine in this process: for tests and the bench's baseline, never on a request's path. */
export const inProcessEngine = (read: ReadObject): DataEngine =>
  engineClient((request) => runEngineRequest(request, read));
