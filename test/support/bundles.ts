import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bundleFunction } from "../../infra/aws/bundle/build";
import type { NativeModule } from "../../infra/aws/bundle/native";

const ROOT = resolve(import.meta.dirname, "../..");
const made = new Map<string, Promise<string>>();

/**
 * A function's deployed bundle, built once a test run (several infra files read the same ones, and
 * each costs seconds of esbuild): in the run's temp folder (test/support/tiers/temp-folder.ts),
 * where a worker reuses what another finished. Built aside and renamed into place, so a reader never
 * sees half a bundle; two workers that build it at once keep the first. Treat it as read-only.
 */
export function bundled(name: string, native?: NativeModule): Promise<string> {
  const dir = join(tmpdir(), `bundle-${name}`);
  let done = made.get(dir);
  if (!done) {
    done = (async () => {
      if (existsSync(dir)) return dir;
      const building = mkdtempSync(join(tmpdir(), `building-${name}-`));
      await bundleFunction({
        entry: join(ROOT, `functions/${name}.ts`),
        outdir: building,
        ...(native ? { native } : {}),
      });
      try {
        renameSync(building, dir);
      } catch {
        rmSync(building, { recursive: true, force: true }); // another worker's is in place
      }
      return dir;
    })();
    made.set(dir, done);
  }
  return done;
}
