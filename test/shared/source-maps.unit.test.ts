import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";

/** A bundle file whose map sends its line 1 (every column from 0) to line 5, column 3 of src/a.ts. */
function bundleFile() {
  const dir = mkdtempSync(join(tmpdir(), "source-maps-"));
  const file = join(dir, "out", "x.mjs");
  mkdirSync(join(dir, "out"));
  writeFileSync(file, "throw new Error()\n");
  writeFileSync(`${file}.map`, JSON.stringify({ version: 3, sources: ["../src/a.ts"], names: [], mappings: "AAIG" }));
  return { dir, file };
}

async function load(inLambda: boolean) {
  vi.resetModules();
  if (inLambda) vi.stubEnv("AWS_LAMBDA_FUNCTION_NAME", "test");
  else vi.stubEnv("AWS_LAMBDA_FUNCTION_NAME", undefined as unknown as string);
  return import("../../shared/source-maps");
}

afterEach(() => vi.unstubAllEnvs());

describe("source-mapped stacks", () => {
  it("maps the bundle's positions, as URLs or paths, and leaves every other frame as it was", async () => {
    const { sourceMappedStack } = await load(true);
    const { dir, file } = bundleFile();
    const stack = [
      "Error: boom",
      `    at f (${pathToFileURL(file).href}:1:7)`,
      `    at async g (${file}:1:1)`,
      "    at h (node:internal/process/task_queues:95:5)",
      `    at k (${join(dir, "out", "nomap.mjs")}:2:3)`,
      "    at [eval]:1:51",
    ].join("\n");
    expect(sourceMappedStack(stack).split("\n")).toEqual([
      "Error: boom",
      `    at f (${join(dir, "src", "a.ts")}:5:4)`,
      `    at async g (${join(dir, "src", "a.ts")}:5:4)`,
      "    at h (node:internal/process/task_queues:95:5)",
      `    at k (${join(dir, "out", "nomap.mjs")}:2:3)`,
      "    at [eval]:1:51",
    ]);
  });

  it("logs a copy: the error's class and own fields kept, its cause mapped too, the error itself untouched", async () => {
    const { withSourceMappedStack } = await load(true);
    const { file } = bundleFile();
    class AppError extends Error {
      status = 503;
    }
    const cause = Object.assign(new Error("inner"), { code: "ECONNREFUSED" });
    cause.stack = `Error: inner\n    at c (${file}:1:2)`;
    const error = new AppError("outer", { cause });
    error.stack = `AppError: outer\n    at o (${file}:1:3)`;
    const logged = withSourceMappedStack(error);
    expect(logged).toBeInstanceOf(AppError);
    expect(logged).not.toBe(error);
    expect([logged.message, logged.status]).toEqual(["outer", 503]);
    expect(logged.stack).toMatch(/src\/a\.ts:5:4\)$/);
    expect((logged.cause as Error & { code: string }).code).toBe("ECONNREFUSED");
    expect((logged.cause as Error).stack).toMatch(/src\/a\.ts:5:4\)$/);
    expect(error.stack).toContain(`${file}:1:3`);
    expect(cause.stack).toContain(`${file}:1:2`);
  });

  it("logs the error itself when its map is not JSON or its stack cannot be read", async () => {
    const { withSourceMappedStack } = await load(true);
    const { file } = bundleFile();
    writeFileSync(`${file}.map`, "{not json");
    const error = new Error("x");
    error.stack = `Error: x\n    at f (${file}:1:1)`;
    expect(withSourceMappedStack(error).stack).toBe(error.stack);
    const hostile = new Error("y");
    Object.defineProperty(hostile, "stack", {
      get() {
        throw new Error("no stack for you");
      },
    });
    expect(withSourceMappedStack(hostile)).toBe(hostile);
  });

  it("outside Lambda maps nothing: tsx and vitest map their own stacks", async () => {
    const { withSourceMappedStack } = await load(false);
    const error = new Error("x");
    expect(withSourceMappedStack(error)).toBe(error);
  });
});
