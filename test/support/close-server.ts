import type { Server } from "node:http";

/** Stops an HTTP server a test started, its kept-alive connections too (else close waits on them). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}
