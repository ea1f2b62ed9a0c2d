import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IntercomStandIn } from "../../../infra/local/intercom";

// The stand-in answers bad input on its routes with 400s instead of taking the
// stack down, and its ids never repeat across restarts.

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "intercom-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Served the way the local stack serves it: one handler call per request, nothing around it. */
async function serve(standIn: IntercomStandIn): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void standIn.handle(req, res, new URL(req.url ?? "/", "http://localhost"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe("the local Intercom stand-in", () => {
  it("answers malformed bodies and paths with a 400 and keeps serving", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on("unhandledRejection", onUnhandled);
    const { url, server } = await serve(new IntercomStandIn());
    try {
      const { conversation_id } = (await (
        await fetch(`${url}/_local/intercom/conversations`, {
          method: "POST",
          body: JSON.stringify({ email: "bo@example.com", body: "hello" }),
        })
      ).json()) as { conversation_id: string };
      const cases: Array<[string, string, string | undefined]> = [
        ["POST", "/_local/intercom/conversations", "{not json"],
        ["POST", "/_local/intercom/conversations", "null"],
        ["POST", "/_local/intercom/conversations", "[1,2]"],
        ["POST", "/_local/intercom/conversations", '"a string"'],
        ["POST", "/_local/intercom/conversations", '{"email":"bo@example.com","body":"hi","role":"admin"}'],
        ["POST", "/_local/intercom/conversations", '{"email":"bo@example.com","body":"hi","role":["lead"]}'],
        ["POST", `/_local/intercom/api/conversations/${conversation_id}/reply`, "null"],
        ["POST", `/_local/intercom/api/conversations/${conversation_id}/reply`, '{"body":'],
        ["POST", `/_local/intercom/api/conversations/${conversation_id}/parts`, "7"],
        ["GET", "/_local/intercom/api/conversations/%E0%A4%A", undefined],
        ["GET", "/_local/intercom/api/contacts/%zz", undefined],
        ["POST", "/_local/intercom/api/conversations/%/reply", "{}"],
      ];
      for (const [method, path, body] of cases) {
        const res = await fetch(`${url}${path}`, { method, body });
        expect({ path, body, status: res.status }).toEqual({ path, body, status: 400 });
        expect(((await res.json()) as { error?: { code?: string } }).error?.code).toBeTruthy();
      }
      expect((await fetch(`${url}/_local/intercom/actions`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      server.close();
    }
  });

  it("never hands out an id twice across restarts, and keeps its conversations", async () => {
    const stateFile = join(dir, "intercom.json");
    const first = new IntercomStandIn({ stateFile });
    const a = first.create("ann@example.com", "first question");
    first.addUserPart(a.conversation_id, "a follow-up");
    const second = new IntercomStandIn({ stateFile }); // the stack restarted
    const b = second.create("ann@example.com", "second question");
    const ids = [a.conversation_id, a.part_id, b.conversation_id, b.part_id];
    expect(new Set(ids).size).toBe(4);
    const { url, server } = await serve(second);
    try {
      const res = await fetch(`${url}/_local/intercom/api/conversations/${a.conversation_id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { source: { id: string } }).source.id).toBe(a.part_id);
    } finally {
      server.close();
    }
  });
});
