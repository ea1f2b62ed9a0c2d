import type { Backends } from "../backends";
import { ConfigError, type Config } from "../config";
import { createEmbeddings } from "../models/embeddings";
import type { DocumentProcessor } from "../documents/process";
import { Ingestor, type IngestSettings } from "./ingestor";
import type { ObjectSource } from "./object-source";

export const ingestSettings = (config: Config): IngestSettings => ({
  maxBytes: config.INGEST_MAX_BYTES,
  chunkSize: config.INGEST_CHUNK_SIZE,
  chunkOverlap: config.INGEST_CHUNK_OVERLAP,
  embedBatchSize: config.INGEST_EMBED_BATCH,
  embedConcurrency: config.INGEST_EMBED_CONCURRENCY,
  maxTextChars: config.INGEST_MAX_TEXT_CHARS,
  maxUnzippedBytes: config.INGEST_MAX_UNZIPPED_BYTES,
  maxPdfPages: config.INGEST_MAX_PDF_PAGES,
  maxChunks: config.INGEST_MAX_CHUNKS,
  timeoutMs: config.INGEST_DOCUMENT_TIMEOUT_MS,
});

/**
 * Wires the ingest consumer: where objects are read, how they are extracted (in this thread
 * unless a processor is given), embedded, and where chunks go.
 */
export async function buildIngestRuntime(backends: Backends, source: ObjectSource, processor?: DocumentProcessor) {
  const { config, store } = backends;
  if (!store) throw new ConfigError("ingestion needs Supabase: SUPABASE_URL is not set");
  if (config.INGEST_CHUNK_OVERLAP >= config.INGEST_CHUNK_SIZE) {
    throw new ConfigError("INGEST_CHUNK_OVERLAP must be smaller than INGEST_CHUNK_SIZE");
  }
  const embeddings = await createEmbeddings(config);
  return {
    ingestor: new Ingestor({
      source,
      store,
      embeddings: embeddings.value,
      settings: ingestSettings(config),
      processor,
    }),
  };
}

export type IngestRuntime = Awaited<ReturnType<typeof buildIngestRuntime>>;
