import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { knownDocuments, LOCAL_BUCKET, watchDropFolder } from "../../../infra/local/drop-folder";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { LocalQueue } from "../../../infra/local/queue";
import { loadConfig } from "../../../shared/config";
import { Ingestor } from "../../../shared/ingest/ingestor";
import { FolderObjectSource } from "../../../shared/ingest/object-source";
import { ingestSettings } from "../../../shared/ingest/runtime";
import { parseS3Notification, type S3ObjectEvent } from "../../../shared/ingest/s3-events";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";
import type { PGlite } from "@electric-sql/pglite";

// The drop folder skips what is not a regular file (with a log line,
// never hanging), and at boot reconciles with the knowledge base by content, not by time.

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "drop-folder-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Watches `dir` until it is ready, collecting the S3 events it sends and the lines it logs. */
async function boot(dir: string, known?: Awaited<ReturnType<typeof knownDocuments>>) {
  const queue = new LocalQueue({ name: "ingest" }); // never started: we read what was sent
  const logs: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const folder = watchDropFolder(dir, queue, {
    known,
    log: (message, fields) => logs.push({ message, fields }),
  });
  await folder.reconciled;
  await folder.close();
  const events = queue.peek().flatMap((m) => parseS3Notification(m.body));
  return { events, logs };
}

describe("the drop folder skips what is not a regular file", () => {
  let socketServer: Server;
  afterAll(() => socketServer?.close());

  it("logs and skips a FIFO, a socket, a directory named .md and an unreadable link, and ingests the rest", async () => {
    const dir = join(root, "odd");
    mkdirSync(dir);
    writeFileSync(join(dir, "real.md"), "A real document.");
    execFileSync("mkfifo", [join(dir, "pipe.md")]);
    socketServer = createServer();
    await new Promise<void>((r) => socketServer.listen(join(dir, "socket.txt"), () => r()));
    mkdirSync(join(dir, "folder.md"));
    writeFileSync(join(dir, "folder.md", "inside.md"), "Inside a folder that looks like a file.");
    symlinkSync(join(dir, "loop-b.md"), join(dir, "loop-a.md"));
    symlinkSync(join(dir, "loop-a.md"), join(dir, "loop-b.md"));

    const { events, logs } = await boot(dir);
    expect(events.map((e) => e.key).sort()).toEqual(["folder.md/inside.md", "real.md"]);
    const skipped = logs.filter((l) => /skipped/.test(l.message)).map((l) => l.fields.key);
    expect(skipped).toEqual(expect.arrayContaining(["pipe.md", "socket.txt", "folder.md"]));
    for (const l of logs) expect(l.fields.reason ?? l.fields.error).toBeTruthy();
  });

  it("the bucket stand-in refuses the same entries with a reason instead of blocking on them", async () => {
    const dir = join(root, "odd");
    const source = new FolderObjectSource(dir);
    for (const [key, reason] of [
      ["pipe.md", /not a regular file \(FIFO\)/],
      ["socket.txt", /not a regular file|cannot be read/],
      ["folder.md", /not a regular file \(directory\)/],
      ["loop-a.md", /cannot be read/],
    ] as const) {
      await expect(source.get(LOCAL_BUCKET, key, 1024)).rejects.toThrow(reason);
    }
    expect((await source.get(LOCAL_BUCKET, "real.md", 1024))?.size).toBe(16);
  });

  it.skipIf(process.getuid?.() === 0)("skips a file it has no permission to read", async () => {
    const dir = join(root, "locked");
    mkdirSync(dir);
    writeFileSync(join(dir, "secret.md"), "not for you");
    chmodSync(join(dir, "secret.md"), 0o000);
    const { events, logs } = await boot(dir);
    expect(events).toEqual([]);
    expect(logs.map((l) => l.fields.key)).toContain("secret.md");
    await expect(new FolderObjectSource(dir).get(LOCAL_BUCKET, "secret.md", 1024)).rejects.toThrow(/cannot be read/);
  });
});

describe("the drop folder reconciles with the knowledge base at boot", () => {
  let db: PGlite;
  let store: RpcAgentStore;
  let ingestor: Ingestor;
  const dir = () => join(root, "kb");
  beforeAll(async () => {
    db = await startLocalPostgres();
    store = new RpcAgentStore(sqlRpc(db));
    mkdirSync(dir());
    ingestor = new Ingestor({
      source: new FolderObjectSource(dir()),
      store,
      embeddings: new HashingEmbeddings(1024),
      settings: ingestSettings(loadConfig({})),
    });
  }, 60_000);
  afterAll(() => db.close());

  const apply = async (events: S3ObjectEvent[]) => {
    for (const e of events) await ingestor.handle(e);
  };
  const sources = async () =>
    (await store.listDocuments(LOCAL_BUCKET))
      .filter((d) => !d.deleted)
      .map((d) => d.source)
      .sort();
  const md5 = (s: string) => createHash("md5").update(s).digest("hex");

  it("deletes what was removed while stopped, re-reads what was replaced with an older mtime, and leaves the rest", async () => {
    writeFileSync(join(dir(), "keep.md"), "Kept as it is.");
    writeFileSync(join(dir(), "gone.md"), "Deleted while the stack was stopped.");
    writeFileSync(join(dir(), "swapped.md"), "The first version of the swapped file.");
    writeFileSync(join(dir(), "sub dir.md"), "A key with a space.");
    // First boot: everything is new.
    await apply((await boot(dir(), await knownDocuments(store))).events);
    expect(await sources()).toEqual(["gone.md", "keep.md", "sub dir.md", "swapped.md"]);

    // While stopped: one file deleted, one replaced by content whose mtime is a year older
    // (as cp -p, tar and rsync -t leave it).
    unlinkSync(join(dir(), "gone.md"));
    const second = "The second version, restored from an old backup.";
    writeFileSync(join(dir(), "swapped.md"), second);
    const yearAgo = new Date(Date.now() - 365 * 86_400_000);
    utimesSync(join(dir(), "swapped.md"), yearAgo, yearAgo);

    const { events } = await boot(dir(), await knownDocuments(store));
    // Only what changed is sent: the unchanged files are not re-read into the queue.
    expect(events.map((e) => [e.kind, e.key]).sort()).toEqual([
      ["created", "swapped.md"],
      ["removed", "gone.md"],
    ]);
    await apply(events);
    expect(await sources()).toEqual(["keep.md", "sub dir.md", "swapped.md"]);
    const swapped = (await store.listDocuments(LOCAL_BUCKET)).find((d) => d.source === "swapped.md");
    expect(swapped).toMatchObject({ status: "ingested", etag: md5(second) });
    const chunks = await db.query<{ content: string }>("select content from knowledge_chunks where document_id = $1", [
      `${LOCAL_BUCKET}/swapped.md`,
    ]);
    expect(chunks.rows.map((r) => r.content)).toEqual([second]);

    // A third boot with nothing changed sends nothing.
    expect((await boot(dir(), await knownDocuments(store))).events).toEqual([]);
  });
});
