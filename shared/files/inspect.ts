import type { imageSize } from "image-size";
import { once } from "../once";
import { type ImageFormat, imageStructureProblem, MAX_IMAGE_SIDE } from "./image-structure";
import type { Column, FileKind } from "./records";
import type { DataFormat } from "./sql-errors";

/** Images the model can take (Bedrock Converse's formats), by the type their bytes say they are. */
export const IMAGE_TYPES = { png: "image/png", jpg: "image/jpeg", gif: "image/gif", webp: "image/webp" } as const;
/** Data files by media type, each with the format its rows are read in. */
export const DATA_FORMATS = {
  "text/csv": "csv",
  "text/tab-separated-values": "tsv",
  "application/jsonl": "jsonl",
  "application/x-ndjson": "jsonl",
  "application/vnd.apache.parquet": "parquet",
} as const satisfies Record<string, DataFormat>;
export const DATA_TYPES = Object.keys(DATA_FORMATS) as (keyof typeof DATA_FORMATS)[];
/** The format a data file's media type announces. */
export const formatOf = (mediaType: string): DataFormat | undefined =>
  (DATA_FORMATS as Record<string, DataFormat>)[mediaType];
export const ACCEPTED_MEDIA_TYPES = [...Object.values(IMAGE_TYPES), ...DATA_TYPES] as string[];

export type Inspection =
  | { ok: true; kind: "image"; media_type: string; width: number; height: number }
  | {
      ok: true;
      kind: "data";
      media_type: string;
      format: DataFormat;
      table: string;
      columns: Column[];
      row_count: number;
      /** set when the file is not UTF-8: it is read as Windows-1252 (see textOf) */
      encoding?: TextEncoding;
    }
  | { ok: false; reason: string };

/** A data file that is not UTF-8 is read as Windows-1252 (the usual spreadsheet export elsewhere). */
export type TextEncoding = "windows-1252";

/**
 * A data file's bytes as UTF-8, for the SQL engine. The object keeps the bytes as uploaded (they
 * are written once, never replaced): a file that is not UTF-8 is converted each time it is read.
 */
export function textOf(bytes: Uint8Array, encoding: TextEncoding | undefined): Uint8Array {
  return encoding ? new TextEncoder().encode(new TextDecoder(encoding).decode(bytes)) : bytes;
}

/** A column name longer than this is no header (most likely a file whose rows are one long line). */
export const MAX_COLUMN_NAME_CHARS = 256;
/** The columns a data file's record keeps (name and type each), as JSON: well inside DynamoDB's 400 KB item. */
export const MAX_COLUMNS_BYTES = 64 * 1024;

/**
 * Why a data file's column list cannot be kept, or undefined. Checked before anything is written:
 * a list past DynamoDB's item size made the complete call a 500 and left the file pending for good.
 */
export function columnListProblem(columns: Column[]): string | undefined {
  const long = columns.find((c) => Array.from(c.name).length > MAX_COLUMN_NAME_CHARS);
  if (long) return `a column name is longer than ${MAX_COLUMN_NAME_CHARS} characters (is the first line a header?)`;
  const size = Buffer.byteLength(JSON.stringify(columns));
  if (size > MAX_COLUMNS_BYTES)
    return `its ${columns.length} columns take ${Math.ceil(size / 1024)} KB to describe; at most ${MAX_COLUMNS_BYTES / 1024} KB fit`;
  return undefined;
}

/** What kind of file a claimed media type announces (the bytes decide whether it is accepted). */
export function claimedKind(mediaType: string): FileKind | undefined {
  if (mediaType.startsWith("image/")) return "image";
  if ((DATA_TYPES as readonly string[]).includes(mediaType)) return "data";
  return undefined;
}

/** image-size, imported by the first image checked: a turn without one never loads it. */
export const loadImageSize = once(async (): Promise<typeof imageSize> => (await import("image-size")).imageSize);

/**
 * Checks an image by its bytes, not its claimed type: one of Converse's formats by its magic
 * bytes (image-size reads them and the dimensions), at least 1x1, and whole (image-structure.ts
 * walks it to its end). Data files are checked by the data function (shared/files/data-engine.ts).
 */
export async function inspectImage(bytes: Uint8Array): Promise<Inspection> {
  const imageSize = await loadImageSize();
  let info: ReturnType<typeof imageSize> | undefined;
  try {
    info = imageSize(bytes);
  } catch {
    info = undefined;
  }
  const mediaType = info?.type ? IMAGE_TYPES[info.type as keyof typeof IMAGE_TYPES] : undefined;
  if (!info || !mediaType) return { ok: false, reason: "not a PNG, JPEG, GIF or WebP image (checked by its bytes)" };
  if (!(info.width > 0 && info.height > 0))
    return { ok: false, reason: `the image has no pixels (${info.width ?? 0}x${info.height ?? 0})` };
  // Before its data is walked: a small PNG announcing 100000x100000 pixels inflates to 10 GB.
  if (info.width > MAX_IMAGE_SIDE || info.height > MAX_IMAGE_SIDE)
    return {
      ok: false,
      reason: `the image is ${info.width}x${info.height} pixels; at most ${MAX_IMAGE_SIDE} on a side (the model's limit)`,
    };
  const broken = await imageStructureProblem(info.type as ImageFormat, bytes);
  if (broken) return { ok: false, reason: `not a whole ${info.type!.toUpperCase()} image: ${broken}` };
  return { ok: true, kind: "image", media_type: mediaType, width: info.width, height: info.height };
}
