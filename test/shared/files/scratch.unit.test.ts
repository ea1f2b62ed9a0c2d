import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeLeftovers } from "../../../shared/files/scratch";

it("removes the folders of ended processes and of this process's id, and keeps running processes' and other names", () => {
  const root = mkdtempSync(join(tmpdir(), "scratch-test-"));
  try {
    const ended = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const folders = { ended: String(ended), own: "4242", running: String(process.pid), other: "not-a-pid" };
    for (const name of Object.values(folders)) mkdirSync(join(root, name, "data-files-x"), { recursive: true });
    removeLeftovers(root, 4242);
    expect(existsSync(join(root, folders.ended))).toBe(false);
    expect(existsSync(join(root, folders.own))).toBe(false);
    expect(existsSync(join(root, folders.running))).toBe(true);
    expect(existsSync(join(root, folders.other))).toBe(true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it("does nothing when no process has left anything yet", () => {
  expect(() => removeLeftovers(join(tmpdir(), `scratch-test-none-${process.pid}`), 1)).not.toThrow();
});

it("keeps this process's own folder once it is making its own", () => {
  const root = mkdtempSync(join(tmpdir(), "scratch-test-"));
  try {
    mkdirSync(join(root, "4242", "data-files-x"), { recursive: true });
    removeLeftovers(root, 4242, { own: false });
    expect(existsSync(join(root, "4242", "data-files-x"))).toBe(true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
