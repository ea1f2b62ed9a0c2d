import { createInflate, crc32 } from "node:zlib";

export type ImageFormat = "png" | "jpg" | "gif" | "webp";

/** The longest side an image may have: the most Bedrock Converse takes (Anthropic models: 8,000 px). */
export const MAX_IMAGE_SIDE = 8000;

/** Every frame's size is checked (GIF, JPEG, animated WebP), not only what the header gives. */
const frameTooLarge = (width: number, height: number) =>
  width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE
    ? `a frame is ${width}x${height} pixels; at most ${MAX_IMAGE_SIDE} on a side (the model's limit)`
    : undefined;

/**
 * Why an image's bytes are not a whole image of its format, or undefined when they are.
 *
 * image-size reads the header (type and dimensions) and stops there, so a file cut after its
 * header, or with garbage after it, passed as an image; the model's API then refused it on every
 * later turn that sent it. This walks the container to its end: a PNG's chunks (each CRC, the
 * IHDR first, IDAT data that inflates to exactly the pixels the header announces, IEND); a JPEG's
 * segments and entropy-coded data to its EOI marker; a GIF's blocks to its trailer; a WebP's RIFF
 * chunks to the length the RIFF header gives, with a VP8/VP8L bitstream signature. Hand-written:
 * the npm decoders that would check the same (sharp, a native libvips; jpeg-js, pngjs, omggif
 * each for one format) decode every pixel into memory, which a 3.75 MB upload should not cost.
 */
export async function imageStructureProblem(format: ImageFormat, bytes: Uint8Array): Promise<string | undefined> {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    if (format === "png") return await pngProblem(view);
    if (format === "jpg") return jpegProblem(view);
    if (format === "gif") return gifProblem(view);
    return webpProblem(view);
  } catch (err) {
    if (err instanceof RangeError) return "it is truncated";
    throw err;
  }
}

/** Reads past the end throw RangeError (Buffer's own), which the caller reports as truncation. */
function need(b: Buffer, end: number): void {
  if (end > b.length) throw new RangeError("truncated");
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7's passes: [x start, y start, x step, y step]. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

async function pngProblem(b: Buffer): Promise<string | undefined> {
  let at = 8;
  let header: { width: number; height: number; depth: number; colour: number; interlace: number } | undefined;
  const idat: Buffer[] = [];
  for (;;) {
    need(b, at + 12);
    const length = b.readUInt32BE(at);
    if (length > 0x7fffffff) return "a PNG chunk's length is out of range";
    need(b, at + 12 + length);
    const type = b.toString("latin1", at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return "a PNG chunk has no valid type";
    if (crc32(b.subarray(at + 4, at + 8 + length)) !== b.readUInt32BE(at + 8 + length))
      return `the PNG's ${type} chunk is corrupt (CRC mismatch)`;
    const data = b.subarray(at + 8, at + 8 + length);
    at += 12 + length;
    if (!header) {
      if (type !== "IHDR" || length !== 13) return "a PNG must start with its IHDR header";
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        depth: data[8]!,
        colour: data[9]!,
        interlace: data[12]!,
      };
      if (PNG_CHANNELS[header.colour] === undefined || ![1, 2, 4, 8, 16].includes(header.depth))
        return "the PNG header names no valid colour type and bit depth";
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
  }
  if (!header || idat.length === 0) return "the PNG holds no image data";
  if (header.width === 0 || header.height === 0) return undefined; // refused for its size by the caller
  const bitsPerPixel = PNG_CHANNELS[header.colour]! * header.depth;
  const scanlines = (width: number, height: number) =>
    width === 0 || height === 0 ? 0 : height * (1 + Math.ceil((width * bitsPerPixel) / 8));
  const expected =
    header.interlace === 1
      ? ADAM7.reduce(
          (sum, [x0, y0, dx, dy]) =>
            sum + scanlines(Math.ceil((header.width - x0) / dx), Math.ceil((header.height - y0) / dy)),
          0,
        )
      : scanlines(header.width, header.height);
  const inflated = await inflatedLength(Buffer.concat(idat), expected);
  if (inflated === undefined) return "the PNG's image data is corrupt (it does not inflate)";
  if (inflated !== expected)
    return `the PNG's image data holds ${inflated < expected ? "fewer" : "more"} pixels than its header says (truncated or corrupt)`;
  return undefined;
}

/** How many bytes a zlib stream inflates to, counted as it streams (never held), up to limit + 1. */
function inflatedLength(data: Buffer, limit: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const inflate = createInflate();
    let total = 0;
    inflate.on("data", (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        inflate.destroy();
        resolve(total);
      }
    });
    inflate.on("end", () => resolve(total));
    inflate.on("error", () => resolve(undefined));
    inflate.end(data);
  });
}

/** Markers that stand alone (no length): RSTn, TEM, SOI. */
const JPEG_STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8]);
/** Start-of-frame markers (every SOFn but DHT C4, JPG C8 and DAC CC). */
const JPEG_FRAME = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegProblem(b: Buffer): string | undefined {
  if (b[0] !== 0xff || b[1] !== 0xd8) return "a JPEG must start with its SOI marker";
  let at = 2;
  let frame = false;
  let scans = 0;
  for (;;) {
    need(b, at + 2);
    if (b[at] !== 0xff) return "a JPEG segment does not start with a marker";
    while (b[at + 1] === 0xff) at++; // fill bytes
    need(b, at + 2);
    const marker = b[at + 1]!;
    at += 2;
    if (marker === 0xd9) break; // EOI
    if (JPEG_STANDALONE.has(marker)) continue;
    need(b, at + 2);
    const length = b.readUInt16BE(at);
    if (length < 2) return "a JPEG segment's length is out of range";
    need(b, at + length);
    if (JPEG_FRAME.has(marker)) {
      need(b, at + 7);
      const tooLarge = frameTooLarge(b.readUInt16BE(at + 5), b.readUInt16BE(at + 3));
      if (tooLarge) return tooLarge;
      frame = true;
    }
    at += length;
    if (marker === 0xda) {
      if (!frame) return "a JPEG scan comes before its frame header";
      scans++;
      // Entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart.
      for (;;) {
        at = b.indexOf(0xff, at);
        if (at < 0) throw new RangeError("truncated");
        need(b, at + 2);
        if (b[at + 1] !== 0x00 && !(b[at + 1]! >= 0xd0 && b[at + 1]! <= 0xd7)) break;
        at++;
      }
    }
  }
  if (!frame || scans === 0) return "the JPEG holds no image data";
  return undefined;
}

function gifProblem(b: Buffer): string | undefined {
  need(b, 13);
  const version = b.toString("latin1", 0, 6);
  if (version !== "GIF87a" && version !== "GIF89a") return "a GIF must start with its signature";
  let at = 13;
  const colourTable = (flags: number) => (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0);
  at += colourTable(b[10]!);
  const subBlocks = () => {
    for (;;) {
      need(b, at + 1);
      const size = b[at]!;
      at += 1 + size;
      if (size === 0) return;
    }
  };
  let images = 0;
  for (;;) {
    need(b, at + 1);
    const block = b[at]!;
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      at += 2; // introducer and label
      subBlocks();
    } else if (block === 0x2c) {
      need(b, at + 10);
      const tooLarge = frameTooLarge(b.readUInt16LE(at + 5), b.readUInt16LE(at + 7));
      if (tooLarge) return tooLarge;
      const flags = b[at + 9]!;
      at += 10 + colourTable(flags) + 1; // descriptor, local colour table, LZW minimum code size
      subBlocks();
      images++;
    } else return "the GIF holds a block of no known kind";
  }
  if (images === 0) return "the GIF holds no image";
  return undefined;
}

function webpProblem(b: Buffer): string | undefined {
  need(b, 12);
  if (b.toString("latin1", 0, 4) !== "RIFF" || b.toString("latin1", 8, 12) !== "WEBP")
    return "a WebP must start with its RIFF header";
  const end = 8 + b.readUInt32LE(4);
  need(b, end);
  let at = 12;
  let bitstream = false;
  while (at < end) {
    need(b, at + 8);
    const type = b.toString("latin1", at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (at + 8 + size > end) return "a WebP chunk runs past the file's end (truncated)";
    const data = b.subarray(at + 8, at + 8 + size);
    if (type === "VP8 ") {
      if (size < 10 || data[3] !== 0x9d || data[4] !== 0x01 || data[5] !== 0x2a)
        return "the WebP's VP8 data is corrupt";
      bitstream = true;
    } else if (type === "VP8L") {
      if (size < 5 || data[0] !== 0x2f) return "the WebP's VP8L data is corrupt";
      bitstream = true;
    } else if (type === "ANMF") {
      if (size < 16) return "the WebP's animation frame is corrupt";
      const tooLarge = frameTooLarge(data.readUIntLE(6, 3) + 1, data.readUIntLE(9, 3) + 1);
      if (tooLarge) return tooLarge;
      bitstream = true;
    }
    at += 8 + size + (size % 2);
  }
  if (!bitstream) return "the WebP holds no image data";
  return undefined;
}
