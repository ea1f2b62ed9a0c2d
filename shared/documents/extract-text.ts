import { HtmlTooDeep, textOfHtml } from "../html-text";
import { extension, unsupportedType } from "./document-types";
import { SkipDocument } from "./skip";
import { checkDeadline, checkTextLength, MAX_ZIP_ENTRIES, OverLimit, timedOut, type DocumentLimits } from "./limits";

/** A document we do not read (type or size): logged and skipped, never retried. */
export class UnsupportedDocument extends SkipDocument {}
/** A document we cannot read (corrupt, encrypted, not text): logged and skipped, never retried. */
export class UnreadableDocument extends SkipDocument {}

export interface DocumentText {
  text: string;
  /** markdown headings can be kept as chunk metadata */
  markdown: boolean;
}

/** Generous enough for any real document; tests and callers with settings pass their own. */
export const DEFAULT_LIMITS: Omit<DocumentLimits, "deadline"> = {
  maxTextChars: 4_000_000,
  maxUnzippedBytes: 32 * 1024 * 1024,
  maxPdfPages: 2000,
  maxChunks: 5000,
  timeoutMs: 60_000,
};

/**
 * Text files must be UTF-8 and hold no NUL: random bytes named `.md` would otherwise become
 * chunks of replacement characters, and Postgres refuses NUL in text.
 */
function utf8(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UnreadableDocument("it is not UTF-8 text");
  }
  if (text.includes("\u0000")) throw new UnreadableDocument("it contains NUL bytes: binary data, not text");
  return text;
}

/**
 * Text from a binary format can carry NULs and lone surrogates; storage takes neither
 * (String.prototype.toWellFormed is ES2024, past this project's target).
 */
const storable = (text: string) =>
  text
    .replaceAll("\u0000", "")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");

/** The text of a document, by the type its key names, within `limits`. */
export async function extractText(
  key: string,
  bytes: Uint8Array,
  limits: DocumentLimits = { ...DEFAULT_LIMITS, deadline: Date.now() + DEFAULT_LIMITS.timeoutMs },
): Promise<DocumentText> {
  const result = await extractUnchecked(key, bytes, limits);
  checkTextLength(result.text.length, limits);
  return result;
}

async function extractUnchecked(key: string, bytes: Uint8Array, limits: DocumentLimits): Promise<DocumentText> {
  switch (extension(key)) {
    case ".md":
    case ".markdown":
      return { text: utf8(bytes), markdown: true };
    case ".txt":
      return { text: utf8(bytes), markdown: false };
    case ".html":
    case ".htm":
      return { text: htmlText(utf8(bytes)), markdown: false };
    case ".json":
      // JSON's escapes can spell what its bytes may not: \u0000 and lone surrogates.
      return { text: storable(jsonText(utf8(bytes))), markdown: false };
    case ".pdf":
      return { text: storable(await pdfText(bytes, limits)), markdown: false };
    case ".docx":
      return { text: storable(await docxText(bytes, limits)), markdown: false };
    default:
      throw new UnsupportedDocument(unsupportedType(key)!);
  }
}

function htmlText(html: string): string {
  try {
    return textOfHtml(html);
  } catch (err) {
    // html-to-text walks the tree by recursion: tens of thousands of nested elements overflow the
    // stack. That is the document's shape, so it is skipped, not retried.
    if (err instanceof HtmlTooDeep) throw new UnreadableDocument(err.message);
    if (err instanceof RangeError) throw new UnreadableDocument("its elements are nested too deep to read");
    throw err;
  }
}

/**
 * Every string value, one per line: keys and structure carry no prose. Walked with an explicit
 * stack, not recursion: JSON.parse accepts nesting hundreds of thousands deep, a call stack does not.
 */
function jsonText(json: string): string {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    throw new UnreadableDocument(`invalid JSON: ${(err as Error).message}`);
  }
  const out: string[] = [];
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.trim()) out.push(v.trim());
    } else if (v && typeof v === "object") {
      // Reversed onto the stack so values come out in document order.
      const children = Array.isArray(v) ? v : Object.values(v);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  return out.join("\n");
}

async function pdfText(bytes: Uint8Array, limits: DocumentLimits): Promise<string> {
  // Loaded on demand: pdf.js is large and most documents are not PDFs.
  const { getDocumentProxy } = await import("unpdf");
  const unreadable = (err: unknown) =>
    (err as Error).name === "PasswordException"
      ? new UnreadableDocument("the PDF is encrypted")
      : new UnreadableDocument(`the PDF cannot be read: ${(err as Error).message}`);
  const pdf = await getDocumentProxy(new Uint8Array(bytes)).catch((err: unknown) => {
    throw unreadable(err);
  });
  try {
    if (pdf.numPages > limits.maxPdfPages)
      throw new OverLimit(`it has ${pdf.numPages} pages, over the ${limits.maxPdfPages}-page limit`);
    // Page by page (unpdf's extractText reads every page at once), so the text and time bounds
    // stop a long PDF part-way instead of after it has all been decoded.
    const pages: string[] = [];
    let length = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      checkDeadline(limits);
      const content = await (await pdf.getPage(n)).getTextContent().catch((err: unknown) => {
        throw unreadable(err);
      });
      const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("");
      length += text.length;
      checkTextLength(length, limits);
      pages.push(text);
    }
    // As unpdf's mergePages: pages joined, whitespace collapsed.
    return pages.join("\n").replace(/\s+/g, " ");
  } finally {
    await pdf.destroy();
  }
}

/**
 * Inflates every entry of the zip once, counting bytes as they come out, and stops at the bound:
 * the sizes a zip declares can lie, and mammoth inflates whole entries into memory. Only a zip
 * that stays within the bound is handed to mammoth.
 */
async function checkUnzippedSize(bytes: Uint8Array, limits: DocumentLimits): Promise<void> {
  const { default: JSZip } = await import("jszip");
  let zip: InstanceType<typeof JSZip>;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (err) {
    throw new UnreadableDocument(`the DOCX cannot be read: ${(err as Error).message}`);
  }
  const entries = Object.values(zip.files).filter((f) => !f.dir);
  if (entries.length > MAX_ZIP_ENTRIES)
    throw new OverLimit(`its zip holds ${entries.length} entries, over the ${MAX_ZIP_ENTRIES}-entry limit`);
  let total = 0;
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const stream = entry.nodeStream("nodebuffer");
      const stop = (err: Error) => {
        stream.removeAllListeners("data");
        (stream as unknown as { destroy(): void }).destroy();
        reject(err);
      };
      stream.on("data", (chunk: Buffer) => {
        total += chunk.length;
        if (total > limits.maxUnzippedBytes)
          stop(new OverLimit(`its zip entries inflate to over the ${limits.maxUnzippedBytes}-byte limit`));
        else if (Date.now() > limits.deadline) stop(timedOut(limits));
      });
      stream.on("end", () => resolve());
      stream.on("error", (err: Error) => stop(new UnreadableDocument(`the DOCX cannot be read: ${err.message}`)));
    });
  }
}

async function docxText(bytes: Uint8Array, limits: DocumentLimits): Promise<string> {
  await checkUnzippedSize(bytes, limits);
  checkDeadline(limits);
  const mammoth = await import("mammoth");
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return value;
  } catch (err) {
    throw new UnreadableDocument(`the DOCX cannot be read: ${(err as Error).message}`);
  }
}
