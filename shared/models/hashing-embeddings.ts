import { Embeddings, type EmbeddingsParams } from "@langchain/core/embeddings";
import { createHash } from "node:crypto";

/**
 * The offline stand-in for Bedrock Titan embeddings: feature hashing over words and
 * character trigrams, signed, then L2-normalised, at Titan's dimension so the same
 * pgvector columns work. It captures lexical overlap only (no synonyms, no meaning),
 * which is enough for recall and knowledge search to behave sensibly offline.
 */
export class HashingEmbeddings extends Embeddings {
  constructor(
    readonly dimensions = 1024,
    params: EmbeddingsParams = {},
  ) {
    super(params);
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embed(t));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.embed(text);
  }

  embed(text: string): number[] {
    const vector = new Float64Array(this.dimensions);
    const words =
      text
        .toLowerCase()
        .normalize("NFKC")
        .match(/[\p{L}\p{N}]+/gu) ?? [];
    for (const word of words) {
      this.add(vector, `w:${word}`, 1);
      const padded = ` ${word} `;
      for (let i = 0; i + 3 <= padded.length; i++) this.add(vector, `g:${padded.slice(i, i + 3)}`, 0.5);
    }
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm);
    return Array.from(vector, (v) => (norm === 0 ? 0 : v / norm));
  }

  /** One hash gives both the bucket and the sign, so collisions cancel out on average. */
  private add(vector: Float64Array, feature: string, weight: number) {
    const digest = createHash("md5").update(feature).digest();
    const bucket = digest.readUInt32LE(0) % this.dimensions;
    vector[bucket]! += (digest[4]! & 1 ? 1 : -1) * weight;
  }
}
