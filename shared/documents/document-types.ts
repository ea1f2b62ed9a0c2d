// Which documents the knowledge base reads, by name: apart from the extraction itself
// (./extract-text.ts), so the routes and the stack that only name them do not load the extractors'
// libraries (html-to-text and its HTML parser, about 90 KB of the knowledge function's init).

export const SUPPORTED_EXTENSIONS = [".md", ".markdown", ".txt", ".html", ".htm", ".json", ".pdf", ".docx"] as const;

/** A key's extension, lower-cased with its dot ("" when it has none). */
export const extension = (key: string) => /\.[^./]+$/.exec(key.toLowerCase())?.[0] ?? "";

const CONTENT_TYPES: Record<string, string> = {
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".txt": "text/plain",
  ".html": "text/html",
  ".htm": "text/html",
  ".json": "application/json",
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

/** The content type a document is read as: by its extension, as extraction decides (octet-stream when unsupported). */
export const contentTypeOf = (key: string) => CONTENT_TYPES[extension(key)] ?? "application/octet-stream";

/** Why a key is not read, by its name alone; undefined for a type the knowledge base reads. */
export const unsupportedType = (key: string): string | undefined =>
  CONTENT_TYPES[extension(key)] ? undefined : `unsupported type "${extension(key) || "(none)"}"`;
