import { convert } from "html-to-text";

/** A document we do not read (type or size): logged and skipped, never retried. */
export class UnsupportedDocument extends Error {}
/** A document we cannot read (corrupt, encrypted): logged and skipped, never retried. */
export class UnreadableDocument extends Error {}

export interface DocumentText {
  text: string;
  /** markdown headings can be kept as chunk metadata */
  markdown: boolean;
}

export const SUPPORTED_EXTENSIONS = [".md", ".markdown", ".txt", ".html", ".htm", ".json", ".pdf", ".docx"] as const;

const extension = (key: string) => /\.[^./]+$/.exec(key.toLowerCase())?.[0] ?? "";
const utf8 = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: false }).decode(bytes);

/** The text of a document, by the type its key names. */
export async function extractText(key: string, bytes: Uint8Array): Promise<DocumentText> {
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
      return { text: jsonText(utf8(bytes)), markdown: false };
    case ".pdf":
      return { text: await pdfText(bytes), markdown: false };
    case ".docx":
      return { text: await docxText(bytes), markdown: false };
    default:
      throw new UnsupportedDocument(`unsupported type "${extension(key) || "(none)"}"`);
  }
}

function htmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
    ],
  });
}

/** Every string value, one per line: keys and structure carry no prose. */
function jsonText(json: string): string {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    throw new UnreadableDocument(`invalid JSON: ${(err as Error).message}`);
  }
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      if (v.trim()) out.push(v.trim());
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(data);
  return out.join("\n");
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  // Loaded on demand: pdf.js is large and most documents are not PDFs.
  const { extractText: pdfExtract, getDocumentProxy } = await import("unpdf");
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const { text } = await pdfExtract(pdf, { mergePages: true });
    return text;
  } catch (err) {
    const name = (err as Error).name;
    if (name === "PasswordException") throw new UnreadableDocument("the PDF is encrypted");
    throw new UnreadableDocument(`the PDF cannot be read: ${(err as Error).message}`);
  }
}

async function docxText(bytes: Uint8Array): Promise<string> {
  const mammoth = await import("mammoth");
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return value;
  } catch (err) {
    throw new UnreadableDocument(`the DOCX cannot be read: ${(err as Error).message}`);
  }
}
