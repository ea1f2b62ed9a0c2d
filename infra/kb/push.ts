import { SingleBar } from "cli-progress";
import type { KbClient, KbDocument } from "./client";
import type { LocalDocument } from "./files";

export interface PushResult {
  source: string;
  status: "ingested" | "skipped" | "failed" | "timed out";
  /** false: the knowledge base already held this content (same MD5), nothing was uploaded */
  uploaded: boolean;
  chunks?: number;
  reason?: string;
}

const SETTLED = new Set(["ingested", "skipped", "failed"]);

/**
 * Uploads what the knowledge base does not already hold (same MD5 as the ETag of the version it
 * reports), then waits until each upload is ingested, skipped or failed, polling the documents
 * list. The bar counts documents settled, so it moves as ingestion, not the upload, finishes.
 */
export async function push(
  client: KbClient,
  documents: LocalDocument[],
  options: { timeoutMs?: number; pollMs?: number; progress?: NodeJS.WritableStream } = {},
): Promise<PushResult[]> {
  const known = new Map((await client.list()).map((d) => [d.source, d]));
  const results = new Map<string, PushResult>();
  const waiting: LocalDocument[] = [];
  for (const doc of documents) {
    const held = known.get(doc.source);
    if (held?.etag === doc.md5 && SETTLED.has(held.status)) {
      results.set(doc.source, { source: doc.source, uploaded: false, ...settled(held) });
    } else waiting.push(doc);
  }
  const bar = new SingleBar({
    format: "pushing [{bar}] {value}/{total} {doc}",
    stream: options.progress ?? process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 1000,
  });
  bar.start(documents.length, results.size, { doc: "" });
  try {
    for (const doc of waiting) {
      bar.update({ doc: `uploading ${doc.source}` });
      await client.upload(doc.source, doc.body);
    }
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    while (waiting.some((d) => !results.has(d.source)) && Date.now() < deadline) {
      const now = new Map((await client.list()).map((d) => [d.source, d]));
      for (const doc of waiting) {
        const held = now.get(doc.source);
        if (results.has(doc.source) || held?.etag !== doc.md5 || !SETTLED.has(held.status)) continue;
        results.set(doc.source, { source: doc.source, uploaded: true, ...settled(held) });
        bar.update(results.size, { doc: `${held.status} ${doc.source}` });
      }
      if (waiting.some((d) => !results.has(d.source))) await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    }
  } finally {
    bar.stop();
  }
  return documents.map((d) => results.get(d.source) ?? { source: d.source, status: "timed out", uploaded: true });
}

const settled = (d: KbDocument) => ({
  status: d.status as PushResult["status"],
  chunks: d.chunks,
  ...(d.reason ? { reason: d.reason } : {}),
});
