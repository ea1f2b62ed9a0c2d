import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  MIGRATIONS_DIR,
  migrationsWidth,
  setMigrationsWidth,
  widthMismatch,
} from "../../infra/supabase/embedding-width";

const copyOfMigrations = () => {
  const dir = mkdtempSync(join(tmpdir(), "migrations-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
};

describe("the embedding width, set in one place", () => {
  it("is declared once by the repository's migrations: 1024, Titan v2's default", () => {
    expect(migrationsWidth()).toBe(1024);
  });

  it("is rewritten in every migration by one command, and nothing else changes", () => {
    const dir = copyOfMigrations();
    const changed = setMigrationsWidth(512, dir);
    expect(changed.length).toBeGreaterThanOrEqual(2);
    expect(migrationsWidth(dir)).toBe(512);
    for (const file of changed) {
      const original = readFileSync(join(MIGRATIONS_DIR, file.split("/").pop()!), "utf8");
      expect(readFileSync(file, "utf8")).toBe(original.replaceAll("vector(1024)", "vector(512)"));
    }
    expect(() => setMigrationsWidth(4096, dir)).toThrow(/1 to 2000/);
  });

  it("must match the deployment's embeddingDimension, or synth says what to run", () => {
    expect(widthMismatch(undefined)).toBeUndefined();
    expect(widthMismatch(1024)).toBeUndefined();
    expect(widthMismatch(512)).toMatch(/npm run db:embedding-dimension -- 512/);
    const dir = copyOfMigrations();
    setMigrationsWidth(512, dir);
    expect(widthMismatch(512, dir)).toBeUndefined();
  });
});
