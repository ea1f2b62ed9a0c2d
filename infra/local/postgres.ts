import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export const MIGRATIONS_DIR = resolve(import.meta.dirname, "../../supabase/migrations");

/**
 * Where migrated snapshots are kept: node_modules/.cache, the conventional home of tools' caches,
 * outside git's view and gone with `npm ci`.
 */
const SNAPSHOT_DIR = resolve(import.meta.dirname, "../../node_modules/.cache/pglite-snapshots");

/**
 * Postgres for the local stack: PGlite (Postgres in WebAssembly) with pgvector, and
 * the same migration files the Supabase CLI applies in production, in file-name order.
 * No `dataDir`: in memory.
 *
 * A new database starts from a snapshot of a freshly migrated one (made once for each set of
 * migration files), because initdb is most of PGlite's start: about 3 s against under 1 s to load
 * the snapshot, paid by every test file and every fresh local stack. An existing data folder is
 * opened as it is and migrated again (the migrations are idempotent), so a stack started on an
 * older one gets the new migrations.
 */
export async function startLocalPostgres(dataDir?: string): Promise<PGlite> {
  const fresh = !dataDir || !existsSync(join(dataDir, "PG_VERSION"));
  if (!fresh) {
    const db = await PGlite.create(dataDir, { extensions: { vector } });
    await applyMigrations(db);
    return db;
  }
  return PGlite.create(dataDir, { extensions: { vector }, loadDataDir: await migratedSnapshot() });
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

/** Names a snapshot by everything that shapes it: PGlite's and pgvector's versions and each migration. */
function snapshotKey(): string {
  const hash = createHash("sha256");
  for (const pkg of ["@electric-sql/pglite", "@electric-sql/pglite-pgvector"]) {
    const manifest = resolve(import.meta.dirname, "../../node_modules", pkg, "package.json");
    hash.update(`${pkg}@${JSON.parse(readFileSync(manifest, "utf8")).version}\n`);
  }
  for (const file of readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    hash.update(`${file}\n`).update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  return hash.digest("hex").slice(0, 16);
}

let snapshot: Promise<Blob> | undefined;

/** The migrated snapshot: from this process's memory, else the cache folder, else made and cached. */
function migratedSnapshot(): Promise<Blob> {
  snapshot ??= loadOrMakeSnapshot().catch((err) => {
    snapshot = undefined;
    throw err;
  });
  return snapshot;
}

async function loadOrMakeSnapshot(): Promise<Blob> {
  const file = join(SNAPSHOT_DIR, `${snapshotKey()}.tar`);
  if (existsSync(file)) return new Blob([await readFile(file)]);
  const db = await PGlite.create({ extensions: { vector } });
  try {
    await applyMigrations(db);
    const tar = await db.dumpDataDir("none");
    // Written aside and renamed: two processes making it at once each rename a whole file.
    await mkdir(SNAPSHOT_DIR, { recursive: true });
    const partial = `${file}.${randomUUID()}.partial`;
    await writeFile(partial, Buffer.from(await tar.arrayBuffer()));
    await rename(partial, file).catch(async (err) => {
      await rm(partial, { force: true });
      throw err;
    });
    return tar;
  } finally {
    await db.close();
  }
}
