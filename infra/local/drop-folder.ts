import chokidar, { type FSWatcher } from "chokidar";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, type Stats } from "node:fs";
import { relative, sep } from "node:path";
import type { LocalQueue } from "./queue";
import { s3Notification, sequencerAt } from "./s3-events";

export const LOCAL_BUCKET = "local-documents";

/**
 * The local documents bucket: a folder. Adding, changing or deleting a file sends the S3
 * notification AWS would send, through the local ingest queue.
 *
 * Sequencers: files found at start-up use their modification time, so an unchanged file
 * is a no-op on every boot; live changes use the current time, so a file put back with an
 * old modification time after a delete still wins over the delete.
 */
export function watchDropFolder(dir: string, queue: LocalQueue, seed?: string): FSWatcher {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    if (seed && existsSync(seed)) cpSync(seed, dir, { recursive: true }); // the sample knowledge base, on first start
  }
  let ready = false;
  const keyOf = (path: string) => relative(dir, path).split(sep).join("/");
  const created = (path: string, stats?: Stats) => {
    const body = readFileSync(path);
    queue.send(
      s3Notification({
        eventName: "ObjectCreated:Put",
        bucket: LOCAL_BUCKET,
        key: keyOf(path),
        size: body.length,
        etag: createHash("md5").update(body).digest("hex"),
        sequencer: sequencerAt(ready ? Date.now() : (stats?.mtimeMs ?? Date.now())),
      }),
    );
  };
  const watcher = chokidar.watch(dir, {
    ignoreInitial: false,
    alwaysStat: true,
    awaitWriteFinish: { stabilityThreshold: 150, pollInterval: 25 },
    ignored: (path) => /(^|[/\\])\.[^/\\]/.test(relative(dir, path)), // dotfiles and editors' temp files
  });
  watcher
    .on("add", created)
    .on("change", created)
    .on("unlink", (path) =>
      queue.send(
        s3Notification({
          eventName: "ObjectRemoved:Delete",
          bucket: LOCAL_BUCKET,
          key: keyOf(path),
          sequencer: sequencerAt(Date.now()),
        }),
      ),
    )
    .on("ready", () => {
      ready = true;
    });
  return watcher;
}
