import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Stack traces in the bundle's source positions, resolved only when a trace is formatted.
 *
 * Node's --enable-source-maps parses the bundle's whole map at load, on every cold start (a
 * quarter of chat's init in the cold-start bench). Hooking stack formatting instead reads a map
 * the first time a stack through its file is printed, so cold starts without an error pay nothing
 * for it. Hand-written rather than source-map-support: that library is 32 KB (its own map parser
 * included) compiled at every init, where Node parses maps itself (`module.SourceMap`) and this
 * only rewrites each frame's position. Only in Lambda: tsx and vitest map their own stacks.
 */
if (process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined) {
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) =>
    [safeHeader(error), ...frames.map((frame) => `    at ${mapped(frame)}`)].join("\n");
}

interface FileMap {
  map: SourceMap;
  /** where the map is: it names the sources relative to itself */
  url: URL;
}

/** Each file's map, read once; null when it has none. */
const maps = new Map<string, FileMap | null>();

function mapOf(file: string): FileMap | null {
  let found = maps.get(file);
  if (found === undefined) {
    try {
      const url = pathToFileURL(`${file.startsWith("file:") ? fileURLToPath(file) : file}.map`);
      found = { map: new SourceMap(JSON.parse(readFileSync(url, "utf8"))), url };
    } catch {
      found = null; // not one of the bundle's files: a Node built-in, the runtime's own
    }
    maps.set(file, found);
  }
  return found;
}

/** The frame as V8 prints it, its bundle position replaced by the source's. */
function mapped(frame: NodeJS.CallSite): string {
  const text = String(frame);
  const file = frame.getFileName();
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  if (!file || line === null || column === null) return text;
  const found = mapOf(file);
  const entry = found?.map.findEntry(line - 1, column - 1);
  if (!found || !entry || !("originalSource" in entry)) return text;
  // Printed as a path, as Node prints a source-mapped frame.
  const source = fileURLToPath(new URL(entry.originalSource, found.url));
  return text.replace(`${file}:${line}:${column}`, `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`);
}

/** V8's first line of a stack; an error whose toString throws still gets a trace. */
function safeHeader(error: Error): string {
  try {
    return String(error);
  } catch {
    return "Error";
  }
}
