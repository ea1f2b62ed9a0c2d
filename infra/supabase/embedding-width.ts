import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The repository's migrations, which `supabase db push` applies. */
export const MIGRATIONS_DIR = join(import.meta.dirname, "../../supabase/migrations");

const VECTOR = /\bvector\((\d+)\)/g;

const migrationFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => join(dir, f));

/**
 * The one embedding width the migrations declare. Every `vector(N)` column and parameter must
 * agree, since a query embedding of another width cannot be compared with the stored ones.
 */
export function migrationsWidth(dir = MIGRATIONS_DIR): number {
  const widths = new Set<number>();
  for (const file of migrationFiles(dir))
    for (const match of readFileSync(file, "utf8").matchAll(VECTOR)) widths.add(Number(match[1]));
  if (widths.size !== 1)
    throw new Error(
      `the migrations declare ${widths.size === 0 ? "no" : "several"} vector widths: ${[...widths].join(", ")}`,
    );
  return [...widths][0]!;
}

/**
 * Rewrites every `vector(N)` in the migrations to `width`, for a Supabase project the migrations
 * have not been pushed to yet. Returns the files changed. A database that already holds
 * embeddings needs a new migration (alter the columns, re-embed) instead: its history must not change.
 */
export function setMigrationsWidth(width: number, dir = MIGRATIONS_DIR): string[] {
  if (!Number.isInteger(width) || width < 1 || width > 2000)
    throw new Error(`an embedding width is a whole number from 1 to 2000 (pgvector's HNSW limit), got ${width}`);
  const changed: string[] = [];
  for (const file of migrationFiles(dir)) {
    const before = readFileSync(file, "utf8");
    const after = before.replace(VECTOR, `vector(${width})`);
    if (after !== before) {
      writeFileSync(file, after);
      changed.push(file);
    }
  }
  return changed;
}

/**
 * The deployment's embedding width (`embeddingDimension`, default 1024) must be the migrations':
 * undefined when it is, else what to do about it.
 */
export function widthMismatch(deployed: number | undefined, dir = MIGRATIONS_DIR): string | undefined {
  const declared = migrationsWidth(dir);
  const width = deployed ?? 1024;
  if (width === declared) return undefined;
  return `embeddingDimension is ${width} but supabase/migrations declare vector(${declared}): run \`npm run db:embedding-dimension -- ${width}\` before \`supabase db push\`, or deploy with -c embeddingDimension=${declared}`;
}
