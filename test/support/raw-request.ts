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
