import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export const MIGRATIONS_DIR = resolve(import.meta.dirname, "../../supabase/migrations");

/**
 * Postgres for the local stack: PGlite (Postgres in WebAssembly) with pgvector, and
 * the same migration files the Supabase CLI applies in production, in file-name order.
 * The migrations are idempotent, so they run at every boot. No `dataDir`: in memory.
 */
export async function startLocalPostgres(dataDir?: string): Promise<PGlite> {
  const db = await PGlite.create(dataDir, { extensions: { vector } });
  await applyMigrations(db);
  return db;
}

/** `rewrite` adapts the SQL before it runs (the scale benchmark narrows the vector columns). */
export async function applyMigrations(
  db: PGlite,
  dir = MIGRATIONS_DIR,
  rewrite = (sql: string) => sql,
): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  for (const file of files) {
    try {
      await db.exec(rewrite(await readFile(join(dir, file), "utf8")));
    } catch (err) {
      throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
    }
  }
  return files;
}
