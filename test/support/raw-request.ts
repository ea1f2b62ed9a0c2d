import { request } from "node:http";

export interface RawReply {
  status: number;
  contentType: string;
  text: string;
}

/**
 * One HTTP request to a local stack, its path, headers and body sent exactly as given (fetch would
 * normalise them), answered with its status, content type and text.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
  body?: Buffer | string,
): Promise<RawReply> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: Number(port), method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A JSON request as a user (x-user-id), its body sent as given, escapes and all, with its length
 * rather than in chunks: Node's own parser refuses a chunked DELETE before any handler sees it.
 */
export const requestAs = (baseUrl: string, user: string, method: string, path: string, body?: string) =>
  rawRequest(
    baseUrl,
    method,
    path,
    {
      "x-user-id": user,
      "content-type": "application/json",
      ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) }),
    },
    body,
  );
