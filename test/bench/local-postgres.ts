// A throwaway PostgreSQL server from the machine's own binaries, for peer benchmarks.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

export interface LocalPostgres {
  /** e.g. "PostgreSQL 15.18" */
  version: string;
  port: number;
  stop(): Promise<void>;
}

/** initdb and postgres from PATH or Debian's /usr/lib/postgresql/<major>/bin, newest first. */
function binaries(): { initdb: string; postgres: string } | undefined {
  const dirs = [
    ...(process.env.PATH ?? "").split(":"),
    ...(existsSync("/usr/lib/postgresql")
      ? readdirSync("/usr/lib/postgresql")
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  for (const dir of dirs) {
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) {
      return { initdb: join(dir, "initdb"), postgres: join(dir, "postgres") };
    }
  }
  return undefined;
}

/**
 * Starts a PostgreSQL server on a free port in a temporary data directory, or returns undefined
 * when the machine has none. PostgreSQL refuses to run as root, so as root it runs as the
 * `postgres` user that Debian's package creates. Settings are the server's defaults (fsync and
 * synchronous commit on).
 */
export async function startLocalPostgres(port: number): Promise<LocalPostgres | undefined> {
  const bin = binaries();
  if (bin === undefined) return undefined;
  const asUser = userInfo().uid === 0 ? postgresUser() : undefined;
  if (userInfo().uid === 0 && asUser === undefined) return undefined;
  const dir = mkdtempSync("/tmp/bench-pg-");
  if (asUser) chownSync(dir, asUser.uid, asUser.gid);
  const opts = { ...(asUser ?? {}), stdio: "ignore" as const };
  try {
    execFileSync(bin.initdb, ["-D", dir, "-U", "postgres", "--auth=trust", "--no-sync"], opts);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const server: ChildProcess = spawn(
    bin.postgres,
    ["-D", dir, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1"],
    opts,
  );
  const version = execFileSync(bin.postgres, ["--version"])
    .toString()
    .trim()
    .replace(/^postgres \(PostgreSQL\) /, "PostgreSQL ")
    .replace(/ \(.*\)$/, "")
    .trim();
  const { default: pg } = await import("pg");
  for (let i = 0; ; i++) {
    const client = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres` });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (i > 100 || server.exitCode !== null) {
        server.kill();
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`PostgreSQL did not start: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    version,
    port,
    stop: async () => {
      if (server.exitCode === null) {
        await new Promise((resolve) => {
          server.once("exit", resolve);
          server.kill("SIGINT");
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    return {
      uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
      gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
    };
  } catch {
    return undefined;
  }
}
