// LangGraph's official Postgres saver, a peer in the checkpoint and long-conversation benches.
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createServer, connect, type AddressInfo, type Server } from "node:net";
import { startLocalPostgres } from "./local-postgres";

/** What a bench reads off a saver's traffic. */
export interface Io {
  reset(): void;
  read(): { bytes: number; requests: number };
  written(): number;
  items(thread: string): Promise<number>;
  /** bytes the thread's rows take in storage */
  bytes?(thread: string): Promise<number>;
}

/** Where the Postgres saver's database runs. */
interface Backend {
  /** for table titles: "PostgreSQL 15.18" or "PGlite socket" */
  where: string;
  port: number;
  /** one statement on the saver's tables, outside the metered connection */
  query<T>(sql: string, params: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

/** The machine's PostgreSQL server when it has one, else PGlite (Postgres in wasm) behind its socket server. */
async function backend(): Promise<Backend> {
  const pg = (await import("pg")).default;
  const port = await freePort();
  const server = await startLocalPostgres(port);
  if (server !== undefined) {
    const admin = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres`, max: 1 });
    return {
      where: server.version,
      port,
      query: async (sql, params) => (await admin.query(sql, params)).rows,
      stop: async () => {
        await admin.end();
        await server.stop();
      },
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  const db = await PGlite.create();
  const socket = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 8 });
  await socket.start();
  return {
    where: "PGlite socket",
    port,
    query: async (sql, params) => (await db.query(sql, params)).rows as never,
    stop: async () => {
      await socket.stop();
      await db.close();
    },
  };
}

/**
 * LangGraph's official Postgres saver on the machine's PostgreSQL (or PGlite), through a TCP
 * relay that counts the bytes each way (client -> server: written; server -> client: read).
 */
export async function postgresSaver(): Promise<{
  saver: BaseCheckpointSaver;
  io: Io;
  where: string;
  close(): Promise<void>;
}> {
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const pg = (await import("pg")).default;
  const db = await backend();
  const port = db.port;
  const counts = { up: 0, down: 0, queries: 0 };
  const relay: Server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    client.on("data", (d) => (counts.up += d.length));
    upstream.on("data", (d) => (counts.down += d.length));
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
  const relayPort = (relay.address() as AddressInfo).port;
  const pool = new pg.Pool({
    connectionString: `postgresql://postgres:postgres@127.0.0.1:${relayPort}/postgres`,
    max: 4,
  });
  // Requests: statements the saver sends (pool.query and client.query alike go through Client#query).
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    counts.queries += 1;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const saver = new PostgresSaver(pool);
  await saver.setup();
  return {
    saver,
    where: db.where,
    io: {
      reset: () => Object.assign(counts, { up: 0, down: 0, queries: 0 }),
      read: () => ({ bytes: counts.down, requests: counts.queries }),
      written: () => counts.up,
      items: async (thread) => {
        const rows = await db.query<{ n: number }>(
          `select (select count(*) from checkpoints where thread_id = $1)
                + (select count(*) from checkpoint_blobs where thread_id = $1)
                + (select count(*) from checkpoint_writes where thread_id = $1) as n`,
          [thread],
        );
        return Number(rows[0]!.n);
      },
      bytes: async (thread) => {
        const rows = await db.query<{ n: number }>(
          ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]
            .map((t) => `(select coalesce(sum(pg_column_size(r.*)), 0) from ${t} r where thread_id = $1)`)
            .join(" + ")
            .replace(/^/, "select ")
            .concat(" as n"),
          [thread],
        );
        return Number(rows[0]!.n);
      },
    },
    close: async () => {
      pg.Client.prototype.query = query;
      await pool.end();
      relay.close();
      await db.stop();
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
