import { KbClient } from "../../../infra/kb/client";
import { recordingServer } from "../../support/recording-server";

// `npm run kb -- ls` and `push` read the whole list through GET /api/knowledge/documents, which
// answers a page at a time: the client follows next_cursor to the end.
describe("the kb client's list", () => {
  it("follows next_cursor page after page, asking for the largest pages", async () => {
    const doc = (source: string) => ({ source, status: "ingested", chunks: 1 });
    const server = await recordingServer((req) => {
      const cursor = req.query.get("cursor");
      if (!cursor) return { status: 200, body: { documents: [doc("a.md"), doc("b.md")], next_cursor: "c1" } };
      if (cursor === "c1") return { status: 200, body: { documents: [doc("c.md")], next_cursor: "c2" } };
      return { status: 200, body: { documents: [doc("d.md")] } };
    });
    try {
      const listed = await new KbClient({ api: server.url }).list();
      expect(listed.map((d) => d.source)).toEqual(["a.md", "b.md", "c.md", "d.md"]);
      expect(server.requests.map((r) => [r.query.get("limit"), r.query.get("cursor")])).toEqual([
        ["1000", null],
        ["1000", "c1"],
        ["1000", "c2"],
      ]);
    } finally {
      await server.close();
    }
  });
});
