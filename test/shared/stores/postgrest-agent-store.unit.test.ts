import { PostgrestAgentStore } from "../../../shared/stores/postgrest-agent-store";
import { supabaseRest } from "../../../shared/stores/postgrest";
import { recordingServer, type RecordedRequest, type Reply } from "../../support/recording-server";

// The Supabase adapter cannot reach a real PostgREST here: these tests hold it to the
// requests PostgREST documents (URL, method, apikey/Authorization/Prefer headers, body)
// and parse the responses PostgREST documents.
const KEY = "service-role-key";
let reply: (req: RecordedRequest) => Reply = () => ({ status: 200, body: [] });
let server: Awaited<ReturnType<typeof recordingServer>>;
let store: PostgrestAgentStore;

beforeAll(async () => {
  server = await recordingServer((req) => reply(req));
  store = new PostgrestAgentStore(supabaseRest(server.url, KEY));
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const last = () => server.requests[server.requests.length - 1]!;
const memoryRow = {
  id: "7d4c1b0e-1111-4a2b-9c3d-000000000001",
  user_id: "u1",
  project_id: null,
  content: "likes teal",
  category: "preference",
  tags: ["colour"],
  metadata: { title: "colour" },
  created_at: "2026-03-01T10:00:00.123456+00:00",
  updated_at: "2026-03-01T10:00:00.123456+00:00",
};

function expectServiceRole(req: RecordedRequest) {
  expect(req.headers.apikey).toBe(KEY);
  expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
}

describe("PostgREST agent store: requests and responses", () => {
  it("insert_memory: POST /rpc/insert_memory with named arguments; a set of rows back", async () => {
    reply = () => ({ status: 200, body: [{ id: memoryRow.id, created: true }] });
    const out = await store.insertMemory({
      userId: "u1",
      projectId: null,
      content: "likes teal",
      embedding: [0.5, -0.25],
      category: "preference",
      tags: ["colour"],
      metadata: { title: "colour" },
      sourceSessionId: "s1",
    });
    expect(out).toEqual({ id: memoryRow.id, created: true });
    const req = last();
    expect([req.method, req.path]).toEqual(["POST", "/rest/v1/rpc/insert_memory"]);
    expectServiceRole(req);
    expect(req.headers["content-type"]).toMatch(/application\/json/);
    expect(req.body).toEqual({
      p_user_id: "u1",
      p_project_id: null,
      p_content: "likes teal",
      p_embedding: "[0.5,-0.25]",
      p_category: "preference",
      p_tags: ["colour"],
      p_metadata: { title: "colour" },
      p_source_session_id: "s1",
    });
  });

  it("match_memories: the scope travels as function arguments; rows are mapped", async () => {
    reply = () => ({ status: 200, body: [{ ...memoryRow, similarity: 0.87 }] });
    const out = await store.matchMemories({ embedding: [1, 0], limit: 3, userId: "u1", projectId: "p1", tags: [] });
    expect(out).toEqual([
      {
        id: memoryRow.id,
        content: "likes teal",
        category: "preference",
        tags: ["colour"],
        metadata: { title: "colour" },
        createdAt: "2026-03-01T10:00:00.123Z",
        similarity: 0.87,
      },
    ]);
    expect(last().path).toBe("/rest/v1/rpc/match_memories");
    expect(last().body).toEqual({
      query_embedding: "[1,0]",
      match_count: 3,
      filter_user_id: "u1",
      filter_project_id: "p1",
      filter_category: null,
      filter_tags: null,
    });
  });

  it("list: GET with eq/is/cs filters, order and limit", async () => {
    reply = () => ({ status: 200, body: [memoryRow] });
    const out = await store.listMemories("u1", { category: "preference", tag: "colour", limit: 20 });
    expect(out[0]).toMatchObject({
      id: memoryRow.id,
      userId: "u1",
      projectId: null,
      createdAt: "2026-03-01T10:00:00.123Z",
    });
    const req = last();
    expect([req.method, req.path]).toEqual(["GET", "/rest/v1/agent_memories"]);
    expectServiceRole(req);
    expect(req.query.get("user_id")).toBe("eq.u1");
    expect(req.query.get("superseded_by")).toBe("is.null");
    expect(req.query.get("category")).toBe("eq.preference");
    expect(req.query.get("tags")).toBe("cs.{colour}");
    expect(req.query.get("order")).toBe("created_at.desc,id.asc");
    expect(req.query.get("limit")).toBe("20");
  });

  it("delete: DELETE filtered by id and owner, asking for the deleted rows back", async () => {
    reply = (req) => ({ status: 200, body: req.query.get("user_id") === "eq.u1" ? [{ id: memoryRow.id }] : [] });
    expect(await store.deleteMemory("u1", memoryRow.id)).toBe(true);
    const req = last();
    expect([req.method, req.path]).toEqual(["DELETE", "/rest/v1/agent_memories"]);
    expect(req.query.get("id")).toBe(`eq.${memoryRow.id}`);
    expect(req.headers.prefer).toMatch(/return=representation/);
    expect(await store.deleteMemory("u2", memoryRow.id)).toBe(false);
  });

  it("user context: one row or none", async () => {
    reply = (req) => ({
      status: 200,
      body:
        req.query.get("user_id") === "eq.u1"
          ? [
              {
                user_id: "u1",
                plan: "Pro",
                usage: { seats: 3 },
                preferences: {},
                updated_at: "2026-03-01T10:00:00+00:00",
              },
            ]
          : [],
    });
    expect(await store.getUserContext("u1")).toEqual({
      userId: "u1",
      plan: "Pro",
      usage: { seats: 3 },
      preferences: {},
      updatedAt: "2026-03-01T10:00:00.000Z",
    });
    expect(await store.getUserContext("u2")).toBeUndefined();
    expect(last().path).toBe("/rest/v1/user_context");
  });

  it("match_knowledge: text and embedding to the RPC; bigint ids come back as strings", async () => {
    reply = () => ({
      status: 200,
      body: [{ id: 42, document_id: "b/faq.md", source: "faq.md", content: "Refunds…", similarity: 0.032 }],
    });
    expect(await store.matchKnowledge({ text: "refund", embedding: [0.1], limit: 2 })).toEqual([
      { id: "42", documentId: "b/faq.md", source: "faq.md", content: "Refunds…", similarity: 0.032 },
    ]);
    expect(last().body).toEqual({
      query_text: "refund",
      query_embedding: "[0.1]",
      match_count: 2,
      full_text_weight: 1,
    });
  });

  it("replace_document_chunks and delete_document: one RPC each, chunks as JSON with pgvector text embeddings", async () => {
    reply = () => ({ status: 200, body: "replaced" });
    const version = {
      documentId: "bucket/red flower.md",
      source: "red flower.md",
      sequencer: "0055AED6DCD90281E5",
      etag: "abc",
    };
    expect(
      await store.replaceDocument(version, [
        { index: 0, content: "Roses.", metadata: { headings: "Flora" }, embedding: [0.5, 0.5] },
      ]),
    ).toBe("replaced");
    expect([last().method, last().path]).toEqual(["POST", "/rest/v1/rpc/replace_document_chunks"]);
    expect(last().body).toEqual({
      p_document_id: "bucket/red flower.md",
      p_source: "red flower.md",
      p_sequencer: "0055AED6DCD90281E5",
      p_etag: "abc",
      p_chunks: [{ chunk_index: 0, content: "Roses.", metadata: { headings: "Flora" }, embedding: "[0.5,0.5]" }],
    });
    reply = () => ({ status: 200, body: "stale" });
    expect(await store.deleteDocument(version)).toBe("stale");
    expect(last().path).toBe("/rest/v1/rpc/delete_document");
    expect(last().body).toEqual({
      p_document_id: "bucket/red flower.md",
      p_source: "red flower.md",
      p_sequencer: "0055AED6DCD90281E5",
    });
  });

  it("document status: begin_document_attempt and record_document_outcome RPCs, and the rows read back", async () => {
    const version = { documentId: "bucket/a b.md", source: "a b.md", sequencer: "00AA", etag: "e1" };
    // A set-returning function: PostgREST answers with an array of rows.
    reply = () => ({ status: 200, body: [{ state: "begin", interrupted: 1, reason: null }] });
    expect(await store.beginDocument(version)).toEqual({ state: "begin", interrupted: 1 });
    expect([last().method, last().path]).toEqual(["POST", "/rest/v1/rpc/begin_document_attempt"]);
    expect(last().body).toEqual({
      p_document_id: "bucket/a b.md",
      p_source: "a b.md",
      p_sequencer: "00AA",
      p_etag: "e1",
    });
    reply = () => ({ status: 200, body: [{ state: "skipped", interrupted: 0, reason: "too big" }] });
    expect(await store.beginDocument(version)).toEqual({ state: "skipped", reason: "too big" });

    // A void function: 204 No Content.
    reply = () => ({ status: 204 });
    await store.recordDocumentOutcome(version, "failed", "ThrottlingException");
    expect(last().path).toBe("/rest/v1/rpc/record_document_outcome");
    expect(last().body).toEqual({
      p_document_id: "bucket/a b.md",
      p_source: "a b.md",
      p_sequencer: "00AA",
      p_etag: "e1",
      p_status: "failed",
      p_reason: "ThrottlingException",
    });

    reply = () => ({
      status: 200,
      body: [
        {
          document_id: "bucket/a b.md",
          source: "a b.md",
          etag: "e0",
          deleted: false,
          chunk_count: 3,
          status: "failed",
          reason: "ThrottlingException",
          status_etag: "e1",
          status_at: "2026-03-01T10:00:00.5+00:00",
          updated_at: "2026-02-01T10:00:00+00:00",
          sequencer: "00A0",
          status_sequencer: "00AA",
          bytes: "2048",
          content_type: "text/markdown",
        },
      ],
    });
    expect(await store.listDocuments("bucket")).toEqual([
      {
        documentId: "bucket/a b.md",
        source: "a b.md",
        etag: "e0",
        deleted: false,
        chunkCount: 3,
        status: "failed",
        reason: "ThrottlingException",
        statusEtag: "e1",
        sequencer: "00AA",
        bytes: 2048,
        contentType: "text/markdown",
        updatedAt: "2026-03-01T10:00:00.500Z",
      },
    ]);
    expect(last().method).toBe("GET");
    expect(last().path).toBe("/rest/v1/knowledge_documents");
    const query = last().query;
    expect(query.get("document_id")).toBe("like.bucket/*");
    expect(query.get("order")).toBe("document_id.asc");

    reply = () => ({ status: 204, body: "" });
    await store.recordDocumentFacts(
      { documentId: "bucket/a b.md", source: "a b.md", sequencer: "00AA", etag: "e1" },
      2048,
      "text/markdown",
    );
    expect(last().path).toBe("/rest/v1/rpc/record_document_facts");
    expect(last().body).toEqual({
      p_document_id: "bucket/a b.md",
      p_sequencer: "00AA",
      p_bytes: 2048,
      p_content_type: "text/markdown",
    });

    reply = () => ({
      status: 200,
      body: [{ chunk_index: 0, metadata: { headings: "Plans > Pro" }, content: `${"x".repeat(200)}` }],
    });
    expect(await store.documentChunks("bucket/a b.md")).toEqual([
      { index: 0, headings: "Plans > Pro", preview: "x".repeat(160), chars: 200 },
    ]);
    expect(last().path).toBe("/rest/v1/knowledge_chunks");
    expect(last().query.get("document_id")).toBe("eq.bucket/a b.md");
    expect(last().query.get("order")).toBe("chunk_index.asc");
  });

  it("surfaces PostgREST's error body instead of an empty result", async () => {
    reply = () => ({
      status: 404,
      body: {
        code: "PGRST202",
        message: "Could not find the function public.match_memories",
        details: null,
        hint: null,
      },
    });
    await expect(store.matchMemories({ embedding: [1], limit: 1, userId: "u1" })).rejects.toThrow(
      /match_memories failed: Could not find/,
    );
    reply = () => ({
      status: 503,
      body: { code: "PGRST000", message: "Could not connect to the database", details: null, hint: null },
    });
    await expect(store.listMemories("u1", { limit: 1 })).rejects.toThrow(/Could not connect/);
  });
});
