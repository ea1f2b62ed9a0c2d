// LangGraph's official Postgres saver, a peer in the checkpoint and long-conversation benches.
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createServer, connect, type AddressInfo, type Server } from "node:net";

/** What a bench reads off a saver's traffic. */
export interface Io {
  reset(): void;
  read(): { bytes: number; requests: number };
  written(): number;
  items(thread: string): Promise<number>;
}

/**
 * LangGraph's official Postgres saver on PGlite behind its socket server, through a TCP
 * relay that counts the bytes each way (client -> server: written; server -> client: read).
 */
export async function postgresSaver(): Promise<{ saver: BaseCheckpointSaver; io: Io; close(): Promise<void> }> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const pg = (await import("pg")).default;
  const db = await PGlite.create();
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 8 });
  await server.start();
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
    io: {
      reset: () => Object.assign(counts, { up: 0, down: 0, queries: 0 }),
      read: () => ({ bytes: counts.down, requests: counts.queries }),
      written: () => counts.up,
      items: async (thread) => {
        const { rows } = await db.query<{ n: number }>(
          `select (select count(*) from checkpoints where thread_id = $1)
                + (select count(*) from checkpoint_blobs where thread_id = $1)
                + (select count(*) from checkpoint_writes where thread_id = $1) as n`,
          [thread],
        );
        return Number(rows[0]!.n);
      },
    },
    close: async () => {
      pg.Client.prototype.query = query;
      await pool.end();
      relay.close();
      await server.stop();
      await db.close();
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
