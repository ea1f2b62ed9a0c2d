import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Where the data engine copies a request's files: a private folder under one per process. A
 * request removes its folder when it ends; a process killed mid-request (a Lambda timeout or
 * running out of memory, where /tmp outlives the process; the local hard limit) never gets there,
 * so each request first removes what processes no longer running left behind (a readdir).
 */
// One root per OS user: a root made by another user (mode 700) would refuse this one's folders.
export const SCRATCH_ROOT = join(tmpdir(), `data-engine-${process.getuid?.() ?? "user"}`);
let swept = false;

export function scratchDir(prefix: string): string {
  const own = join(SCRATCH_ROOT, String(process.pid));
  // Every request: a process that keeps serving outlives others killed beside it (locally).
  // Housekeeping only: a folder it cannot remove must not fail the request.
  try {
    removeLeftovers(SCRATCH_ROOT, process.pid, { own: !swept });
  } catch {
    // left for the next request's sweep
  }
  swept = true;
  mkdirSync(own, { recursive: true, mode: 0o700 });
  return mkdtempSync(join(own, prefix));
}

/**
 * Removes the folders of processes that have ended, and with `own` the one under this process's
 * id: before this process made any, it is a reused pid's.
 */
export function removeLeftovers(root: string, ownPid: number, { own = true }: { own?: boolean } = {}): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return; // nothing left yet
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    if (pid === ownPid ? own : !running(pid)) rmSync(join(root, name), { recursive: true, force: true });
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
