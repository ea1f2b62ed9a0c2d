import { inspectFile } from "../../../shared/files/data-inspect";
import { GIF_1X1, JPEG_3X2, pngBytes, WEBP_3X2, WEBP_LOSSLESS_3X2 } from "../../support/images";

// An image is checked by its bytes to its end: a truncated or empty one, which the model's API
// would refuse on every later turn that sends it, is refused at upload.

const inspect = (bytes: Uint8Array, mediaType = "image/png") =>
  inspectFile(bytes, { name: "i", media_type: mediaType }, 0);

const WHOLE: [string, Buffer, string, number, number][] = [
  ["PNG", pngBytes(5, 3), "image/png", 5, 3],
  ["interlaced PNG", pngBytes(11, 9, { interlaced: true }), "image/png", 11, 9],
  ["JPEG", JPEG_3X2, "image/jpeg", 3, 2],
  ["WebP", WEBP_3X2, "image/webp", 3, 2],
  ["lossless WebP", WEBP_LOSSLESS_3X2, "image/webp", 3, 2],
  ["GIF", GIF_1X1, "image/gif", 1, 1],
];

describe("an image is checked to its end", () => {
  it.each(WHOLE)("a whole %s passes with its type and size", async (_name, bytes, mediaType, width, height) => {
    expect(await inspect(bytes)).toEqual({ ok: true, kind: "image", media_type: mediaType, width, height });
  });

  it.each(WHOLE)("a %s cut anywhere is refused", async (_name, bytes) => {
    for (let length = 1; length < bytes.length; length++) {
      const out = await inspect(bytes.subarray(0, length));
      expect([length, out.ok]).toEqual([length, false]);
    }
  });

  it("refuses an image with no pixels", async () => {
    expect(await inspect(pngBytes(0, 0))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no pixels \(0x0\)/),
    });
    expect(await inspect(pngBytes(4, 0))).toMatchObject({ ok: false, reason: expect.stringMatching(/no pixels/) });
    const flat = Buffer.from(GIF_1X1);
    flat.writeUInt16LE(0, 6); // the logical screen's width
    expect(await inspect(flat)).toMatchObject({ ok: false, reason: expect.stringMatching(/no pixels/) });
  });

  // A 9.7 MB PNG announcing 100000x100000 pixels inflated 10 GB to be checked (17 s of CPU, past
  // the files function's time), for an image no model could be sent. Its size is read first.
  it("refuses an image over Bedrock's 8000 pixels a side by its header, before its data is read", async () => {
    expect(await inspect(pngBytes(100_000, 1))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/100000x1 pixels; at most 8000 on a side/),
    });
    expect(await inspect(pngBytes(100_000, 100_000, { rows: 1 }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/at most 8000 on a side/),
    });
    expect(await inspect(pngBytes(8000, 1))).toMatchObject({ ok: true, width: 8000 });
  });

  // image-size reads the first frame's size (a GIF's screen); a later frame could be far larger,
  // and Bedrock would refuse the image on every turn that sent it.
  it("refuses a GIF or JPEG with any frame over 8000 pixels a side", async () => {
    const gif = Buffer.from(GIF_1X1);
    const descriptor = gif.indexOf(0x2c, 13 + (gif[10]! & 0x80 ? 3 * 2 ** ((gif[10]! & 7) + 1) : 0));
    gif.writeUInt16LE(9000, descriptor + 5); // the frame's width
    expect(await inspect(gif)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a frame is 9000x1 pixels; at most 8000 on a side/),
    });
    const jpeg = Buffer.from(JPEG_3X2);
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    const length = jpeg.readUInt16BE(sof + 2);
    const second = Buffer.from(jpeg.subarray(sof, sof + 2 + length));
    second.writeUInt16BE(60000, 5); // height
    second.writeUInt16BE(60000, 7); // width
    const twoFrames = Buffer.concat([jpeg.subarray(0, sof + 2 + length), second, jpeg.subarray(sof + 2 + length)]);
    expect(await inspect(twoFrames)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a frame is 60000x60000 pixels/),
    });
  });

  it("refuses an animated WebP with a frame over 8000 pixels a side", async () => {
    const chunk = (type: string, data: Buffer) =>
      Buffer.concat([
        Buffer.from(type, "latin1"),
        Buffer.from(Uint32Array.of(data.length).buffer),
        data,
        Buffer.alloc(data.length % 2),
      ]);
    const u24 = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);
    const vp8 = WEBP_3X2.subarray(12); // the still image's VP8 chunk, whole
    const frame = (width: number) =>
      chunk("ANMF", Buffer.concat([u24(0), u24(0), u24(width - 1), u24(1), u24(100), Buffer.from([0]), vp8]));
    const animated = (width: number) => {
      const body = Buffer.concat([
        Buffer.from("WEBP", "latin1"),
        chunk("VP8X", Buffer.concat([Buffer.from([0x02, 0, 0, 0]), u24(2), u24(1)])),
        chunk("ANIM", Buffer.alloc(6)),
        frame(3),
        frame(width),
      ]);
      return Buffer.concat([Buffer.from("RIFF", "latin1"), Buffer.from(Uint32Array.of(body.length).buffer), body]);
    };
    expect(await inspect(animated(3))).toMatchObject({ ok: true });
    expect(await inspect(animated(9000))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a frame is 9000x2 pixels/),
    });
  });

  it("refuses a PNG whose bytes are corrupt or whose pixel data does not fill its header", async () => {
    const flipped = pngBytes(8, 8);
    flipped[45] = flipped[45]! ^ 0xff; // inside IDAT: its CRC no longer matches
    expect(await inspect(flipped)).toMatchObject({ ok: false, reason: expect.stringMatching(/CRC/) });
    expect(await inspect(pngBytes(64, 48, { rows: 10 }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/fewer pixels than its header says/),
    });
    expect(await inspect(pngBytes(64, 48, { rows: 60 }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/more pixels than its header says/),
    });
  });

  it("refuses a JPEG with no scan, and a WebP with no bitstream", async () => {
    const sos = JPEG_3X2.indexOf(Buffer.from([0xff, 0xda]));
    const noScan = Buffer.concat([JPEG_3X2.subarray(0, sos), Buffer.from([0xff, 0xd9])]);
    expect(await inspect(noScan)).toMatchObject({ ok: false });
    const header = Buffer.from("RIFF\x04\x00\x00\x00WEBP", "latin1");
    expect(await inspect(header)).toMatchObject({ ok: false });
  });
});
