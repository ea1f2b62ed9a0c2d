import { existsSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, resolve, sep } from "node:path";
import { type PlaygroundConfig, playgroundCsp } from "../playground-config";

/** Where `npm run playground:build` (and `npm start`, before it starts) writes the playground. */
export const PLAYGROUND_DIST = resolve(import.meta.dirname, "../playground/dist");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".map": "application/json",
};

export interface PlaygroundServing {
  /** the build to serve; default: where `npm run playground:build` writes it */
  dist?: string;
  /** what the page is told at /config.json; default: the local stack's (same origin, no sign-in) */
  config?: PlaygroundConfig;
  /** origins besides its own the page may call (its CSP's connect-src) */
  connect?: readonly string[];
}

/**
 * Serves the playground's static build: `/` is its page, `/config.json` how it reaches the API, and
 * `/assets/…` its bundles (hashed names, so cached for good). Those paths are no API route's, so
 * they cannot shadow one. Everything is local files: the page loads nothing from elsewhere, which
 * its Content-Security-Policy enforces.
 */
export function servePlayground(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  { dist = PLAYGROUND_DIST, config = { mode: "local" }, connect = [] }: PlaygroundServing = {},
): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (url.pathname === "/config.json") {
    const body = JSON.stringify(config);
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" });
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  }
  const isPage = url.pathname === "/" || url.pathname === "/index.html";
  if (!isPage && !url.pathname.startsWith("/assets/")) return false;
  const file = resolve(dist, isPage ? "index.html" : `.${decodePath(url.pathname)}`);
  if (!file.startsWith(resolve(dist) + sep) || !existsSync(file) || !statSync(file).isFile()) {
    if (isPage) {
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
      res.end("The playground is not built yet: run `npm run playground:build` (npm start builds it first).\n");
    } else {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
    }
    return true;
  }
  const body = readFileSync(file);
  res.writeHead(200, {
    "content-type": TYPES[extname(file)] ?? "application/octet-stream",
    "content-length": body.length,
    "cache-control": isPage ? "no-cache" : "public, max-age=31536000, immutable",
    "x-content-type-options": "nosniff",
    ...(isPage ? { "content-security-policy": playgroundCsp(connect) } : {}),
  });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return "/\0"; // never a file: answered 404 below
  }
}
