import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { responseStream } from "../../../infra/local/api-gateway";

// The local stand-in for API Gateway's streaming integration: a handler that ends its stream ends
// the response; one that destroys it (a joinStream cut at its deadline, so the client reconnects
// with its Last-Event-ID) cuts the connection, as Lambda's does, rather than leaving the client
// waiting on a response that never ends.

async function served(handle: (stream: ReturnType<typeof responseStream>) => void) {
  const server = createServer((_req, res) => handle(responseStream(res)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<{ body: string; ended: boolean }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the response neither ended nor was cut")), 3000);
      request({ host: "127.0.0.1", port, path: "/" }, (res) => {
        let body = "";
        const settle = (ended: boolean) => {
          clearTimeout(timer);
          resolve({ body, ended });
        };
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => settle(true));
        res.on("error", () => settle(false));
        res.on("aborted", () => settle(false));
      })
        .on("error", reject)
        .end();
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe("the local response stream", () => {
  it("ends the response when the handler ends its stream", async () => {
    const reply = await served((stream) => {
      stream.setPrelude({ statusCode: 200, headers: { "content-type": "text/event-stream" } });
      stream.write("id: 0\n\n");
      stream.end();
    });
    expect(reply).toEqual({ body: "id: 0\n\n", ended: true });
  });

  it("cuts the connection when the handler destroys its stream, after what it wrote", async () => {
    const reply = await served((stream) => {
      stream.setPrelude({ statusCode: 200, headers: { "content-type": "text/event-stream" } });
      stream.write("id: 0\n\n", () => setTimeout(() => stream.destroy(), 50));
    });
    expect(reply).toEqual({ body: "id: 0\n\n", ended: false });
  });
});
