import type { Backends } from "../backends";
import { ConfigError } from "../config";
import { createEmbeddings } from "../models";
import { Ingestor } from "./ingestor";
import type { ObjectSource } from "./object-source";

/** Wires the ingest consumer: where objects are read, how they are embedded, where chunks go. */
export async function buildIngestRuntime(backends: Backends, source: ObjectSource) {
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
      settings: {
        maxBytes: config.INGEST_MAX_BYTES,
        chunkSize: config.INGEST_CHUNK_SIZE,
        chunkOverlap: config.INGEST_CHUNK_OVERLAP,
        embedBatchSize: config.INGEST_EMBED_BATCH,
        embedConcurrency: config.INGEST_EMBED_CONCURRENCY,
      },
    }),
  };
}

export type IngestRuntime = Awaited<ReturnType<typeof buildIngestRuntime>>;
