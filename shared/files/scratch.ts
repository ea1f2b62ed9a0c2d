import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Where the data engine copies a request's files: a private folder under one per process. A
 * request removes its folder when it ends; a process killed mid-request (a Lambda timeout or
 * running out of memory, where /tmp outlives the process; the local hard limit) never gets there,
 * so a process's first request removes what processes no longer running left behind.
 */
const ROOT = join(tmpdir(), "data-engine");
let swept = false;

export function scratchDir(prefix: string): string {
  const own = join(ROOT, String(process.pid));
  if (!swept) {
    removeLeftovers(ROOT, process.pid);
    swept = true;
  }
  mkdirSync(own, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(own, prefix));
}

/** Removes the folders of processes that have ended, and one under this process's id (a reused pid's). */
export function removeLeftovers(root: string, ownPid: number): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return; // nothing left yet
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    if (pid === ownPid || !running(pid)) rmSync(join(root, name), { recursive: true, force: true });
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}
