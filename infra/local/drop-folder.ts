import chokidar from "chokidar";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { SUPPORTED_EXTENSIONS } from "../../shared/documents/document-types";
import { FolderObjectSource, TooLarge } from "../../shared/ingest/object-source";
import { createLogger } from "../../shared/logger";
import type { AgentStore } from "../../shared/stores/agent-store";
import type { LocalQueue } from "./queue";
import { s3Notification, sequencerAt } from "./s3-events";

export const LOCAL_BUCKET = "local-documents";

/** What the knowledge base holds for one key of the bucket, as the drop folder compares it. */
export interface KnownDocument {
  /** content hash (MD5, S3's ETag) of the version the status describes */
  etag: string | null;
  /** that version was ingested or skipped: the same content needs nothing more */
  settled: boolean;
  /** chunks or a status the key's removal must clear */
  live: boolean;
}

/** The knowledge base's view of the local bucket, read once at boot. */
export async function knownDocuments(store: AgentStore): Promise<Map<string, KnownDocument>> {
  const docs = await store.listDocuments(LOCAL_BUCKET);
  return new Map(
    docs.map((d) => [
      d.source,
      {
        etag: d.statusEtag ?? d.etag,
        settled: d.status === "ingested" || d.status === "skipped",
        live: !d.deleted || (d.status !== null && d.status !== "deleted"),
      },
    ]),
  );
}

export interface DropFolderOptions {
  /** copied in when the folder does not exist yet: the sample knowledge base, on first start */
  seed?: string;
  /** the knowledge base at boot (knownDocuments): files are reconciled against it by content */
  known?: Map<string, KnownDocument>;
  /** files over this are announced with their size only (ingestion skips them), not read */
  maxBytes?: number;
  log?: (message: string, fields: Record<string, unknown>) => void;
}

const logger = createLogger("drop-folder");
const DOCUMENT_NAME = new RegExp(`(${SUPPORTED_EXTENSIONS.map((e) => e.replace(".", "\\.")).join("|")})$`, "i");

export interface DropFolder {
  /** resolves once the boot scan has sent what changed while the stack was stopped */
  reconciled: Promise<void>;
  close(): Promise<void>;
}

/**
 * The local documents bucket: a folder. Adding, changing or deleting a file sends the S3
 * notification AWS would send, through the local ingest queue. Only regular files are objects:
 * a FIFO, socket, device, unreadable file or a directory named like a document is logged and
 * skipped (a FIFO read would otherwise block forever).
 *
 * At boot the folder is reconciled with the knowledge base by content: a file whose hash is the
 * one last ingested (or skipped) sends nothing, any other file is sent as created, and a document
 * whose file is gone is sent as removed. Modification times are not trusted: cp -p, tar and
 * rsync -t put old ones on new content. Every event's sequencer is the time it is sent, strictly
 * increasing, so a later event always wins over an earlier one. The watcher is armed before the
 * scan, so a change during the scan is sent too (twice at worst, which ingestion absorbs).
 */
export function watchDropFolder(dir: string, queue: LocalQueue, options: DropFolderOptions = {}): DropFolder {
  const { seed, known, maxBytes = 10 * 1024 * 1024 } = options;
  const log = options.log ?? ((message, fields) => logger.warn(message, fields));
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    if (seed && existsSync(seed)) cpSync(seed, dir, { recursive: true });
  }
  const source = new FolderObjectSource(dir);
  let lastSequencer = 0;
  const sequencer = () => {
    lastSequencer = Math.max(lastSequencer + 1, Math.round(Date.now() * 1000));
    return sequencerAt(lastSequencer / 1000);
  };
  const keyOf = (path: string) => relative(dir, path).split(sep).join("/");
  const hidden = (path: string) => /(^|[/\\])\.[^/\\]/.test(relative(dir, path)); // dotfiles, editors' temp files
  const skipped = (key: string, reason: string) => log("drop folder: entry skipped", { key, reason });

  /** Sends a file as created, unless it is no object or (at boot) the content already known. */
  const created = async (path: string, atBoot: boolean) => {
    const key = keyOf(path);
    let size: number;
    let etag: string | undefined;
    try {
      const object = await source.get(LOCAL_BUCKET, key, maxBytes);
      if (!object) return; // gone again: its unlink event follows
      size = object.size;
      etag = createHash("md5").update(object.body).digest("hex");
    } catch (err) {
      if (!(err instanceof TooLarge)) return skipped(key, (err as Error).message);
      size = err.size;
    }
    const before = atBoot ? known?.get(key) : undefined;
    if (before?.settled && etag && before.etag === etag) return;
    queue.send(
      s3Notification({ eventName: "ObjectCreated:Put", bucket: LOCAL_BUCKET, key, size, etag, sequencer: sequencer() }),
    );
  };
  const removed = (key: string) => {
    queue.send(
      s3Notification({ eventName: "ObjectRemoved:Delete", bucket: LOCAL_BUCKET, key, sequencer: sequencer() }),
    );
  };

  /** The boot scan: every entry under the folder, then the documents whose file is gone. */
  const reconcile = async () => {
    const seen = new Set<string>();
    const walk = async (folder: string): Promise<void> => {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (hidden(path)) continue;
        if (entry.isDirectory()) {
          // A folder is a key prefix; one named like a document is worth saying so.
          if (DOCUMENT_NAME.test(entry.name)) skipped(keyOf(path), "not a regular file (directory)");
          await walk(path);
        } else {
          seen.add(keyOf(path));
          await created(path, true);
        }
      }
    };
    await walk(dir);
    for (const [key, doc] of known ?? []) if (doc.live && !seen.has(key)) removed(key);
  };

  const watcher = chokidar.watch(dir, {
    ignoreInitial: true,
    awaitWriteFinish: { stabilityThreshold: 150, pollInterval: 25 },
    ignored: hidden,
  });
  const failed = (err: unknown) => log("drop folder: event failed", { error: (err as Error).message });
  watcher
    .on("add", (path) => void created(path, false).catch(failed))
    .on("change", (path) => void created(path, false).catch(failed))
    .on("unlink", (path) => removed(keyOf(path)))
    .on("error", failed);
  const reconciled = new Promise<void>((resolve) => watcher.once("ready", resolve)).then(reconcile).catch(failed);
  return {
    reconciled,
    close: async () => {
      await reconciled;
      await watcher.close();
    },
  };
}
