import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";

/**
 * Payload codecs. Every stored payload records the codec it was written with
 * (attribute `cd`), so the choice can change later without breaking old items.
 */
export type Codec = "raw" | "br";

/** Below this size compression rarely pays for its CPU and framing bytes. */
const COMPRESS_MIN_BYTES = 256;

/**
 * Brotli at quality 4: on chat-sized JSON it compresses about as well as gzip -9
 * at a fraction of Brotli's default (quality 11) CPU cost, which matters on a
 * Lambda's fractional vCPU.
 */
const BROTLI_OPTIONS = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 4,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
};

export interface Encoded {
  codec: Codec;
  bytes: Uint8Array;
}

/** Compresses when it helps; incompressible data is kept raw rather than grown. */
export function encodePayload(raw: Uint8Array): Encoded {
  if (raw.byteLength < COMPRESS_MIN_BYTES) return { codec: "raw", bytes: raw };
  const packed = brotliCompressSync(raw, {
    ...BROTLI_OPTIONS,
    params: { ...BROTLI_OPTIONS.params, [constants.BROTLI_PARAM_SIZE_HINT]: raw.byteLength },
  });
  if (packed.byteLength >= raw.byteLength) return { codec: "raw", bytes: raw };
  return { codec: "br", bytes: new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength) };
}

export function decodePayload(codec: string, bytes: Uint8Array): Uint8Array {
  switch (codec) {
    case "raw":
      return bytes;
    case "br": {
      const out = brotliDecompressSync(bytes);
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    }
    default:
      throw new Error(`Unknown checkpoint payload codec "${codec}"`);
  }
}
