import { chunkText, type ChunkOptions, type TextChunk } from "./chunk";
import { extractText } from "./extract-text";
import { checkDeadline, OverLimit, type DocumentLimits } from "./limits";

export interface ProcessRequest {
  key: string;
  body: Uint8Array;
  limits: DocumentLimits;
  chunking: ChunkOptions;
}

/**
 * Extraction and chunking, the CPU-heavy part of ingesting a document. In Lambda it runs in the
 * handler's thread (one function instance per batch, nothing else to stall); the local stack runs
 * it on a worker thread, so a large document cannot stall its API (infra/local/document-worker.ts).
 * Throws UnsupportedDocument, UnreadableDocument or OverLimit for documents to skip.
 */
export type DocumentProcessor = (request: ProcessRequest) => Promise<TextChunk[]>;

export const processDocument: DocumentProcessor = async ({ key, body, limits, chunking }) => {
  const { text, markdown } = await extractText(key, body, limits);
  checkDeadline(limits);
  const chunks = await chunkText(text, markdown, chunking);
  if (chunks.length > limits.maxChunks)
    throw new OverLimit(`it splits into ${chunks.length} chunks, over the ${limits.maxChunks}-chunk limit`);
  checkDeadline(limits);
  return chunks;
};
