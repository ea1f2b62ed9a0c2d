import { localStackForTests } from "../support/local-stack";

// The knowledge base as its admins see and manage it, over HTTP on the local stack (hashing
// embedder, offline stand-in model): uploads through presigned URLs, status with reasons,
// chunks, search with scores, deletes through the bucket's event path.
const local = localStackForTests("agent-kb");
beforeAll(() => local.stack.dropFolderReconciled);

const ADMIN = { "x-user-id": "ops", "x-user-role": "admin" };
async function call(method: string, path: string, headers: Record<string, string> = ADMIN, body?: unknown) {
  const res = await fetch(`${local.stack.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in time: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const documentNamed = (source: string) => async () =>
  (await call("GET", "/api/knowledge/documents")).body.documents.find((d: { source: string }) => d.source === source);

async function upload(source: string, body: Uint8Array) {
  const granted = await call("POST", "/api/knowledge/uploads", ADMIN, { source, bytes: body.byteLength });
  expect(granted.status).toBe(200);
  const put = await fetch(granted.body.upload_url, { method: "PUT", headers: granted.body.headers, body });
  expect(put.status).toBe(200);
}

describe("knowledge base administration", () => {
  it("refuses a chat user every knowledge route with 403", async () => {
    const user = { "x-user-id": "ann" };
    for (const [method, path] of [
      ["GET", "/api/knowledge/documents"],
      ["GET", "/api/knowledge/documents/pricing.md"],
      ["DELETE", "/api/knowledge/documents/pricing.md"],
      ["POST", "/api/knowledge/uploads"],
      ["GET", "/api/knowledge/search?q=price"],
    ]) {
      const res = await call(method!, path!, user, method === "POST" ? { source: "x.md", bytes: 1 } : undefined);
      expect([path, res.status, res.body.error.code]).toEqual([path, 403, "forbidden"]);
    }
    expect((await call("GET", "/api/knowledge/documents", { ...user, "x-user-role": "user" })).status).toBe(403);
  });

  it("lists the seeded documents as ingested, with size, type, chunks and sequencer, and shows one's chunks", async () => {
    const pricing = await waitFor(documentNamed("pricing.md"), (d) => d?.status === "ingested");
    expect(pricing).toMatchObject({
      status: "ingested",
      content_type: "text/markdown",
      bytes: expect.any(Number),
      chunks: expect.any(Number),
      sequencer: expect.any(String),
    });
    expect(pricing.chunks).toBeGreaterThan(0);
    const shown = await call("GET", "/api/knowledge/documents/pricing.md");
    expect(shown.status).toBe(200);
    expect(shown.body.chunks).toHaveLength(pricing.chunks);
    expect(shown.body.chunks[0]).toMatchObject({ index: 0, preview: expect.any(String), chars: expect.any(Number) });
    expect(shown.body.chunks.some((c: { headings: string | null }) => c.headings)).toBe(true);
  });

  it("searches as search_knowledge_base does, with scores", async () => {
    const found = await call("GET", "/api/knowledge/search?q=how%20much%20does%20the%20Pro%20plan%20cost");
    expect(found.status).toBe(200);
    expect(found.body.results[0]).toMatchObject({ source: "pricing.md", score: expect.any(Number) });
  });

  it("ingests an upload, reports a corrupt PDF as failed with its reason, and deletes through the bucket", async () => {
    await upload("guides/setup.md", new TextEncoder().encode("# Setup\n\nInstall the zanthorian connector first.\n"));
    const setup = await waitFor(documentNamed("guides/setup.md"), (d) => d?.status === "ingested");
    expect(setup.chunks).toBe(1);
    expect((await call("GET", "/api/knowledge/documents/guides%2Fsetup.md")).body.chunks[0].headings).toBe("Setup");

    await upload("broken.pdf", new TextEncoder().encode("%PDF-1.7\nthis is not a real PDF"));
    const broken = await waitFor(documentNamed("broken.pdf"), (d) => d?.status === "failed" || d?.status === "skipped");
    expect(broken).toMatchObject({ content_type: "application/pdf", reason: expect.stringMatching(/\w/) });

    const removed = await call("DELETE", "/api/knowledge/documents/guides%2Fsetup.md");
    expect(removed.status).toBe(202);
    await waitFor(documentNamed("guides/setup.md"), (d) => d === undefined);
    const search = await call("GET", "/api/knowledge/search?q=zanthorian%20connector");
    expect(search.body.results.map((r: { source: string }) => r.source)).not.toContain("guides/setup.md");
  });

  // A probe's finding: the list was the whole table in one response, tombstones included, and
  // past Lambda's 6 MB (about 7,000 documents of long names) it answered 502, breaking `kb`
  // and the playground's Knowledge tab; `limit` and `cursor` were silently ignored.
  it("lists documents a page at a time, in source order, each page's next_cursor leading to the next", async () => {
    const whole: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await call("GET", `/api/knowledge/documents?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.documents.length).toBeLessThanOrEqual(2);
      whole.push(...res.body.documents.map((d: { source: string }) => d.source));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(1);
    expect(whole).toEqual([...whole].sort());
    expect(new Set(whole).size).toBe(whole.length);
    expect(whole).toContain("pricing.md");
    for (const [query, code] of [
      ["limit=0", "invalid_limit"],
      ["limit=1001", "invalid_limit"],
      ["limit=two", "invalid_limit"],
      ["cursor=%21%21", "invalid_cursor"],
      [`cursor=${Buffer.from('["x"]').toString("base64url")}`, "invalid_cursor"],
    ]) {
      const res = await call("GET", `/api/knowledge/documents?${query}`);
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, code]);
    }
  });

  it("answers bad requests with a precise 4xx", async () => {
    const bad: [string, string, unknown, number, string][] = [
      ["POST", "/api/knowledge/uploads", { source: "../escape.md", bytes: 10 }, 400, "invalid_source"],
      ["POST", "/api/knowledge/uploads", { source: "a.exe", bytes: 10 }, 400, "unsupported_document_type"],
      // A hidden file (the drop folder leaves them out): taken, put, and never ingested or listed.
      ["POST", "/api/knowledge/uploads", { source: ".hidden.md", bytes: 10 }, 400, "invalid_source"],
      ["POST", "/api/knowledge/uploads", { source: "notes/.hidden.md", bytes: 10 }, 400, "invalid_source"],
      ["POST", "/api/knowledge/uploads", { source: "a.md", bytes: 0 }, 400, "invalid_bytes"],
      ["POST", "/api/knowledge/uploads", { source: "a.md", bytes: 10 ** 10 }, 413, "document_too_large"],
      ["POST", "/api/knowledge/uploads", { source: "a.md" }, 400, "invalid_bytes"],
      ["GET", "/api/knowledge/search", undefined, 400, "invalid_q"],
      ["GET", "/api/knowledge/documents/nothing-here.md", undefined, 404, "document_not_found"],
      ["DELETE", "/api/knowledge/documents/nothing-here.md", undefined, 404, "document_not_found"],
      ["GET", "/api/knowledge/documents/a%2F..%2Fb.md", undefined, 400, "invalid_source"],
    ];
    for (const [method, path, body, status, code] of bad) {
      const res = await call(method, path, ADMIN, body);
      expect([path, res.status, res.body.error?.code]).toEqual([path, status, code]);
    }
  });
});
