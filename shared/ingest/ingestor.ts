import type { Embeddings } from "@langchain/core/embeddings";
import pLimit from "p-limit";
import { chunkText } from "../documents/chunk";
import { extractText, UnreadableDocument, UnsupportedDocument } from "../documents/extract-text";
import type { AgentStore, DocumentChunk } from "../stores/agent-store";
import { TooLarge, type ObjectSource } from "./object-source";
import type { S3ObjectEvent } from "./s3-events";

export interface IngestSettings {
  maxBytes: number;
  chunkSize: number;
  chunkOverlap: number;
  /** texts per embeddings call */
  embedBatchSize: number;
  /** embeddings calls in flight at once, per document */
  embedConcurrency: number;
}

export type IngestOutcome =
  | { action: "replaced" | "deleted" | "stale"; chunks?: number }
  | { action: "skipped"; reason: string }
  | { action: "missing" };

/**
 * One S3 object event into the knowledge base. Documents that cannot be ingested (type,
 * size, corrupt or encrypted) are skipped with a reason rather than failed: retrying them
 * would never succeed. Failures of the store or the embeddings throw, so the event is retried.
 */
export class Ingestor {
  constructor(
    private readonly deps: {
      source: ObjectSource;
      store: AgentStore;
      embeddings: Embeddings;
      settings: IngestSettings;
    },
  ) {}

  async handle(event: S3ObjectEvent): Promise<IngestOutcome> {
    const version = {
      documentId: `${event.bucket}/${event.key}`,
      source: event.key,
      sequencer: event.sequencer,
      etag: event.etag,
    };
    if (event.kind === "removed") return { action: await this.deps.store.deleteDocument(version) };

    const { settings } = this.deps;
    if (event.size !== undefined && event.size > settings.maxBytes) {
      return { action: "skipped", reason: `${event.size} bytes is over the ${settings.maxBytes}-byte limit` };
    }
    try {
      const object = await this.deps.source.get(event.bucket, event.key, settings.maxBytes);
      // Gone since the event: its ObjectRemoved event will clear whatever is stored.
      if (!object) return { action: "missing" };
      const { text, markdown } = await extractText(event.key, object.body);
      const pieces = await chunkText(text, markdown, settings);
      const embeddings = await this.embed(pieces.map((p) => p.content));
      const chunks: DocumentChunk[] = pieces.map((p, index) => ({
        index,
        content: p.content,
        metadata: p.metadata,
        embedding: embeddings[index]!,
      }));
      return { action: await this.deps.store.replaceDocument(version, chunks), chunks: chunks.length };
    } catch (err) {
      if (err instanceof TooLarge)
        return { action: "skipped", reason: `${err.size} bytes is over the ${settings.maxBytes}-byte limit` };
      if (err instanceof UnsupportedDocument || err instanceof UnreadableDocument)
        return { action: "skipped", reason: err.message };
      throw err;
    }
  }

  /** Embeds in batches, a bounded number in flight, keeping the input order. */
  private async embed(texts: string[]): Promise<number[][]> {
    const { embedBatchSize, embedConcurrency } = this.deps.settings;
    const limit = pLimit(embedConcurrency);
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += embedBatchSize) batches.push(texts.slice(i, i + embedBatchSize));
    const results = await Promise.all(batches.map((batch) => limit(() => this.deps.embeddings.embedDocuments(batch))));
    return results.flat();
  }
}
