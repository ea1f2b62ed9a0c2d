// The task the local document worker runs (infra/local/document-worker.ts), on its own thread.
import type { TextChunk } from "../../shared/documents/chunk";
import { OverLimit, TimedOut } from "../../shared/documents/limits";
import { processDocument, type ProcessRequest } from "../../shared/documents/process";
import { SkipDocument } from "../../shared/documents/skip";

/** Error classes do not cross threads: a skip comes back as its reason. */
export type TaskResult = { chunks: TextChunk[] } | { skip: string; kind: SkipKind };
export type SkipKind = "timed-out" | "over-limit" | "unreadable";

export default async function run(request: ProcessRequest): Promise<TaskResult> {
  try {
    return { chunks: await processDocument(request) };
  } catch (err) {
    if (err instanceof SkipDocument)
      return {
        skip: err.message,
        kind: err instanceof TimedOut ? "timed-out" : err instanceof OverLimit ? "over-limit" : "unreadable",
      };
    throw err;
  }
}
