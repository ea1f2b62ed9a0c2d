import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Stack traces in the bundle's source positions, resolved when a stack is logged (shared/logger.ts).
 *
 * Not when a stack is formatted: Node formats some of its own errors' stacks as it makes them (a
 * web stream's released reader does, and every streamed turn releases one), so a formatting hook
 * read the bundle's map in every container's first turn, for errors nobody prints. Node's
 * `module.SourceMap` decodes a whole map when built: 130 ms for chat's first-request chunk, and
 * source-map-support, used before, took 500 ms for its first lookup. Nor with --enable-source-maps,
 * which parses every map at load. Hand-written because those are the libraries: this only finds
 * the positions in a logged stack and maps each file's once. Only in Lambda: tsx and vitest map
 * their own stacks.
 */
const ENABLED = process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined;

/** A position in a V8 stack line: a file (URL or path) of the bundle, its line and column. */
const POSITION = /((?:file:\/\/)?\/[^\s()]+?\.m?js):(\d+):(\d+)/g;

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
      found = null; // not one of the bundle's files
    }
    maps.set(file, found);
  }
  return found;
}

/** A stack's bundle positions replaced by their sources' (printed as paths, as Node prints them). */
export function sourceMappedStack(stack: string): string {
  return stack.replace(POSITION, (position, file: string, line: string, column: string) => {
    const found = mapOf(file);
    const entry = found?.map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!found || !entry || !("originalSource" in entry)) return position;
    const source = fileURLToPath(new URL(entry.originalSource, found.url));
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

/**
 * The error as a log shows it: a copy, every own property kept, its stack (and its cause's) in
 * source positions. Outside Lambda, or when anything about it cannot be read, the error itself:
 * logging an error must not fail.
 */
export function withSourceMappedStack<E extends Error>(error: E): E {
  if (!ENABLED) return error;
  try {
    if (typeof error.stack !== "string") return error;
    const copy = Object.create(Object.getPrototypeOf(error), Object.getOwnPropertyDescriptors(error)) as E;
    const own = (value: unknown) => ({ value, configurable: true, writable: true });
    Object.defineProperty(copy, "stack", own(sourceMappedStack(error.stack)));
    if (error.cause instanceof Error) Object.defineProperty(copy, "cause", own(withSourceMappedStack(error.cause)));
    return copy;
  } catch {
    return error;
  }
}
