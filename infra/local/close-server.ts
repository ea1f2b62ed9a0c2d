import type { Server } from "node:http";

/**
 * Stops a local server and drops its open connections. Node's `server.close()` waits for every
 * connection to end, and one that connected but has not finished sending a request is not idle:
 * it would hold the close until the headers timeout (60 s), and a test's afterAll with it.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
