import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";

/** What the knowledge base ingests (shared/documents/extract-text.ts). */
export const DOCUMENT_EXTENSIONS = [".md", ".markdown", ".txt", ".html", ".htm", ".json", ".pdf", ".docx"];

export interface LocalDocument {
  /** its name in the knowledge base: the path under the folder given, or the file's name */
  source: string;
  body: Uint8Array;
  /** MD5, hex: what S3 reports as the ETag of a single-part upload */
  md5: string;
}

const md5 = (body: Uint8Array) => createHash("md5").update(body).digest("hex");

/** The documents among the paths given: files as named, folders walked (hidden entries skipped). */
export function collectDocuments(paths: string[]): { documents: LocalDocument[]; ignored: string[] } {
  const documents: LocalDocument[] = [];
  const ignored: string[] = [];
  const add = (file: string, source: string) => {
    if (!DOCUMENT_EXTENSIONS.some((ext) => file.toLowerCase().endsWith(ext))) return void ignored.push(file);
    const body = new Uint8Array(readFileSync(file));
    documents.push({ source: source.split("\\").join("/"), body, md5: md5(body) });
  };
  for (const path of paths) {
    if (!statSync(path).isDirectory()) {
      add(path, basename(path));
      continue;
    }
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.name.startsWith(".")) continue;
        const full = join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else add(full, relative(path, full));
      }
    };
    walk(path);
  }
  return { documents, ignored };
}

/**
 * The seeds' ingest format: a JSON list of {source, content}. Each becomes a document whose name
 * is the source made a safe relative path (a URL's scheme and unsafe characters become "-"),
 * read as Markdown unless its name already has a supported extension.
 */
export function documentsFromJson(text: string): LocalDocument[] {
  const list = JSON.parse(text) as unknown;
  if (!Array.isArray(list)) throw new Error("the JSON file must hold a list of {source, content}");
  return list.map((item, i) => {
    const { source, content } = (item ?? {}) as { source?: unknown; content?: unknown };
    if (typeof source !== "string" || !source.trim() || typeof content !== "string")
      throw new Error(`item ${i}: needs a non-empty string "source" and a string "content"`);
    let name = source
      .trim()
      .replace(/^[a-z]+:\/\//i, "")
      .replace(/[^A-Za-z0-9._/-]+/g, "-")
      .split("/")
      .filter((part) => part && part !== "." && part !== "..")
      .join("/");
    if (!DOCUMENT_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext))) name += ".md";
    const body = new TextEncoder().encode(content);
    return { source: name, body, md5: md5(body) };
  });
}
