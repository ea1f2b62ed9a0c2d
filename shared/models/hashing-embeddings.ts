import { Embeddings, type EmbeddingsParams } from "@langchain/core/embeddings";
import { createHash } from "node:crypto";

/** Words that carry no topic: left out so they do not make unrelated texts look alike. */
const STOP_WORDS = new Set(
  (
    "a an the and or but if of to in on at by for with from about as into over after before is am are was were be been " +
    "being do does did have has had i me my mine we our you your he she it its they them their this that these those " +
    "what which who whom whose when where why how can could should would will shall may might must not no yes so than " +
    "then there here just also very too any some all please tell know"
  ).split(" "),
);

/** A few verbs of liking read as one, so "what do I like" finds "I prefer ...". */
const CANONICAL: Record<string, string> = {
  prefer: "like",
  love: "like",
  enjoy: "like",
  favour: "like",
  favor: "like",
};

/** Crude suffix stripping: enough for plurals and common verb forms to meet. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/**
 * The offline stand-in for Bedrock Titan embeddings: feature hashing over content words
 * and their character trigrams, signed, then L2-normalised, at Titan's dimension so the
 * same pgvector columns work. It captures lexical overlap only (no meaning beyond a few
 * canonical verbs), which is enough for recall and knowledge search to behave sensibly offline.
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
    for (const raw of words) {
      if (STOP_WORDS.has(raw)) continue;
      const stemmed = stem(raw);
      const word = CANONICAL[raw] ?? CANONICAL[stemmed] ?? stemmed;
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
