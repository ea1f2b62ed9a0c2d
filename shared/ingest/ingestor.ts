import type { Embeddings } from "@langchain/core/embeddings";
import pLimit from "p-limit";
import { checkDeadline, type DocumentLimits, TimedOut } from "../documents/limits";
import { processDocument, type DocumentProcessor } from "../documents/process";
import { SkipDocument } from "../documents/skip";
import type { AgentStore, DocumentChunk, DocumentVersion } from "../stores/agent-store";
import { contentTypeOf, unsupportedType } from "../documents/document-types";
import { TooLarge, type ObjectSource } from "./object-source";
import { DocumentBusy } from "./document-busy";
import type { S3ObjectEvent } from "./s3-events";

export interface IngestSettings {
  maxBytes: number;
  chunkSize: number;
  chunkOverlap: number;
  /** texts per embeddings call */
  embedBatchSize: number;
  /** embeddings calls in flight at once, per document */
  embedConcurrency: number;
  /** bounds on what one document may make extraction produce (shared/documents/limits.ts) */
  maxTextChars: number;
  maxUnzippedBytes: number;
  maxPdfPages: number;
  maxChunks: number;
  /** one document's fetch, extraction, chunking and embedding, at most */
  timeoutMs: number;
}

export type IngestOutcome =
  | { action: "replaced" | "deleted" | "stale"; chunks?: number }
  | { action: "skipped"; reason: string }
  | { action: "missing" };

/** Attempts at one version that began and never finished before it is skipped rather than retried. */
export const MAX_INTERRUPTED_ATTEMPTS = 2;

/**
 * One S3 object event into the knowledge base. Every created version ends recorded on its
 * knowledge_documents row: ingested (by the chunk swap itself), skipped with the reason (type,
 * size, content, a bound, or attempts that never finished: retrying would never succeed), or
 * failed with the error, which is also thrown so the event is retried.
 */
export class Ingestor {
  private readonly process: DocumentProcessor;

  constructor(
    private readonly deps: {
      source: ObjectSource;
      store: AgentStore;
      embeddings: Embeddings;
      settings: IngestSettings;
      /** extraction and chunking; in this thread unless given (the local stack's worker thread) */
      processor?: DocumentProcessor;
    },
  ) {
    this.process = deps.processor ?? processDocument;
  }

  async handle(event: S3ObjectEvent): Promise<IngestOutcome> {
    const version: DocumentVersion = {
      documentId: `${event.bucket}/${event.key}`,
      source: event.key,
      sequencer: event.sequencer,
      etag: event.etag,
    };
    const { store } = this.deps;
    if (event.kind === "removed") {
      // An ObjectRemoved event names a version, not the key. In a versioned bucket, deleting an old
      // version leaves the current one, and deleting the delete marker restores the object: the
      // document is then what the key holds now, read as if it were created (under this event's
      // sequencer, so the order of the key's events still holds).
      const current = await this.deps.source.head(event.bucket, event.key);
      if (current) return this.handle({ ...event, kind: "created", size: current.size, etag: current.etag });
      return { action: await store.deleteDocument(version) };
    }

    const { settings } = this.deps;
    // A skip for the content (type, size, corrupt) holds for those bytes (their ETag) under any
    // later event; one for how this attempt went (gone, out of time, died) holds for this event only.
    const skip = async (reason: string, forContent = true): Promise<IngestOutcome> => {
      await store.recordDocumentOutcome(forContent ? version : { ...version, etag: undefined }, "skipped", reason);
      return { action: "skipped", reason };
    };
    const tooLarge = (size: number) => `${size} bytes is over the ${settings.maxBytes}-byte limit`;
    // Size and type are what an admin sees beside the status (GET /api/knowledge/documents).
    const facts = (bytes: number) => store.recordDocumentFacts(version, bytes, contentTypeOf(event.key));
    // Every key under the prefix is announced (.DS_Store too): a type never read is skipped by its name, unread.
    const unsupported = unsupportedType(event.key);
    if (unsupported) return skip(unsupported);
    if (event.size !== undefined && event.size > settings.maxBytes) {
      const outcome = await skip(tooLarge(event.size));
      await facts(event.size);
      return outcome;
    }

    const limits: DocumentLimits = {
      maxTextChars: settings.maxTextChars,
      maxUnzippedBytes: settings.maxUnzippedBytes,
      maxPdfPages: settings.maxPdfPages,
      maxChunks: settings.maxChunks,
      timeoutMs: settings.timeoutMs,
      deadline: Date.now() + settings.timeoutMs,
    };
    // The attempt holds the document until twice its deadline (processing stops at the deadline,
    // checked between stages; the rest covers the stage running then and the swap). A delivery of
    // the same content before then waits; one after it finds an attempt that died.
    const attempt = await store.beginDocument(version, new Date(limits.deadline + settings.timeoutMs));
    if (attempt.state === "stale") return { action: "stale" };
    if (attempt.state === "busy")
      throw new DocumentBusy(`${event.key} is being processed by another delivery of the same content`);
    if (attempt.state === "skipped") return { action: "skipped", reason: attempt.reason };
    if (attempt.interrupted >= MAX_INTERRUPTED_ATTEMPTS)
      return skip(
        `processing did not finish in ${attempt.interrupted} earlier attempts (the process died, or ran out of memory or time)`,
        false,
      );

    try {
      const object = await this.deps.source.get(event.bucket, event.key, settings.maxBytes);
      // Gone since the event: its ObjectRemoved event will clear whatever is stored.
      if (!object) {
        await skip("the object no longer exists", false);
        return { action: "missing" };
      }
      await facts(object.body.byteLength);
      const pieces = await this.process({
        key: event.key,
        body: object.body,
        limits,
        chunking: { chunkSize: settings.chunkSize, chunkOverlap: settings.chunkOverlap },
      });
      const embeddings = await this.embed(
        pieces.map((p) => p.content),
        limits,
      );
      const chunks: DocumentChunk[] = pieces.map((p, index) => ({
        index,
        content: p.content,
        metadata: p.metadata,
        embedding: embeddings[index]!,
      }));
      return { action: await store.replaceDocument(version, chunks), chunks: chunks.length };
    } catch (err) {
      if (err instanceof TooLarge) return skip(tooLarge(err.size));
      if (err instanceof SkipDocument) return skip(err.message, !(err instanceof TimedOut));
      // Recorded before the retry; a store that is down cannot record it, and the retry will.
      await store.recordDocumentOutcome(version, "failed", (err as Error).message ?? String(err)).catch(() => {});
      throw err;
    }
  }

  /** Embeds in batches, a bounded number in flight, keeping the input order; stops at the deadline. */
  private async embed(texts: string[], limits: DocumentLimits): Promise<number[][]> {
    const { embedBatchSize, embedConcurrency } = this.deps.settings;
    const limit = pLimit(embedConcurrency);
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += embedBatchSize) batches.push(texts.slice(i, i + embedBatchSize));
    const results = await Promise.all(
      batches.map((batch) =>
        limit(async () => {
          checkDeadline(limits);
          return this.deps.embeddings.embedDocuments(batch);
        }),
      ),
    );
    checkDeadline(limits);
    return results.flat();
  }
}
