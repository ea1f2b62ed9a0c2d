import { connect, type Socket } from "node:net";
import { startLocalDynamo } from "../../../infra/local/dynamo";

/**
 * A stand-in's close must not wait on a client's connection: one that connected and sent nothing
 * yet, or sent half a request, would hold Node's server.close() until its headers timeout (60 s),
 * and a test file's afterAll with it.
 */
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

async function openSocket(endpoint: string, send?: string): Promise<void> {
  const { hostname, port } = new URL(endpoint);
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  if (send) await new Promise((r) => socket.write(send, r));
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise.then(() => "closed"), new Promise((r) => setTimeout(() => r("still open"), ms))]);

describe("closing the local stand-ins", () => {
  it.each([
    ["a connection that sent nothing", undefined],
    ["half a request", "POST / HTTP/1.1\r\nHost: local\r\n"],
  ])("dynalite closes with %s open", async (_, send) => {
    const dynamo = await startLocalDynamo();
    await openSocket(dynamo.endpoint, send);
    expect(await within(dynamo.close(), 3_000)).toBe("closed");
  });
});
