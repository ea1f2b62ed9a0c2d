import type { PGlite } from "@electric-sql/pglite";
import { startLocalPostgres } from "../../../infra/local/postgres";
import {
  postgrestOver,
  postgrestStandIn,
  STAND_IN_KEY,
  STAND_IN_URL,
  statusOf,
} from "../../support/postgrest-stand-in";

// The stand-in answers as PostgREST documents /rpc (docs.postgrest.org: "Functions as RPC",
// "Errors"): these hold it to that, bad requests first, since the store contract only sends good ones.
let db: PGlite;
let standIn: typeof fetch;
beforeAll(async () => {
  db = await startLocalPostgres();
  standIn = postgrestStandIn(db, STAND_IN_KEY);
}, 60_000);
afterAll(() => db.close());

const HEADERS = {
  apikey: STAND_IN_KEY,
  Authorization: `Bearer ${STAND_IN_KEY}`,
  "Content-Type": "application/json",
};

async function post(fn: string, body: string, init: RequestInit = {}) {
  const res = await standIn(`${STAND_IN_URL}/rest/v1/rpc/${fn}`, { method: "POST", headers: HEADERS, body, ...init });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

const vector = (fill: number, width = 1024) => `[${Array(width).fill(fill).join(",")}]`;

describe("PostgREST stand-in: calls it answers", () => {
  it("answers a scalar function with its bare value, a set-returning one with rows, a void one with 204", async () => {
    expect(await post("ping", "{}")).toEqual({ status: 200, body: true });
    expect(
      await post(
        "insert_memory",
        JSON.stringify({ p_user_id: "u", p_project_id: null, p_content: "hi", p_embedding: vector(0.1) }),
      ),
    ).toEqual({ status: 200, body: [{ id: expect.any(String), created: true }] });
    expect(await post("list_documents", JSON.stringify({ p_bucket: "none" }))).toEqual({ status: 200, body: [] });
    expect(
      await post(
        "record_document_facts",
        JSON.stringify({ p_document_id: "b/k", p_sequencer: "01", p_bytes: 1, p_content_type: "text/plain" }),
      ),
    ).toEqual({ status: 204, body: undefined });
  });

  it("leaves an argument with a default out when the body does, and reads rows' values as JSON", async () => {
    const { body } = await post("list_memories", JSON.stringify({ p_user_id: "u", p_limit: 5 }));
    expect(body).toEqual([
      expect.objectContaining({ user_id: "u", content: "hi", tags: [], metadata: {}, superseded_by: null }),
    ]);
    expect(body[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+\+00:00$/);
  });
});

describe("PostgREST stand-in: requests it refuses", () => {
  it("orders, offsets and limits a set-returning function's rows by the query, never past max_rows", async () => {
    const few = postgrestStandIn(db, STAND_IN_KEY, 3);
    await db.query(
      `insert into knowledge_documents (document_id, source, sequencer)
       select 'paged/d' || i, 'd' || i, '01' from generate_series(1, 5) as i`,
    );
    const sources = async (query: string) => {
      const res = await few(`${STAND_IN_URL}/rest/v1/rpc/list_documents${query}`, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify({ p_bucket: "paged" }),
      });
      return ((await res.json()) as { source: string }[]).map((r) => r.source);
    };
    expect(await sources("")).toEqual(["d1", "d2", "d3"]);
    expect(await sources("?order=document_id.desc")).toEqual(["d5", "d4", "d3"]);
    expect(await sources("?order=document_id.asc&offset=3&limit=10")).toEqual(["d4", "d5"]);
    expect(await sources("?order=document_id&offset=1&limit=2")).toEqual(["d2", "d3"]);
    expect(await sources("?offset=9")).toEqual([]);
    expect(await sources("?order=document_id&document_id=gt.paged%2Fd2&limit=2")).toEqual(["d3", "d4"]);
    // The production transport reads them all in pages, even under a max_rows below its page size.
    const rows = (await postgrestOver(db, 3).allRows("list_documents", { p_bucket: "paged" }, "document_id")) as {
      source: string;
    }[];
    expect(rows.map((r) => r.source)).toEqual(["d1", "d2", "d3", "d4", "d5"]);
  });

  it("answers 404 PGRST202 for an unknown function", async () => {
    expect(await post("no_such_function", "{}")).toEqual({
      status: 404,
      body: {
        code: "PGRST202",
        message: "Could not find the function public.no_such_function() in the schema cache",
        details: expect.stringContaining("no_such_function"),
        hint: null,
      },
    });
  });

  it("answers 404 PGRST202 for a misnamed, missing or extra argument, naming the function it has", async () => {
    const misnamed = await post("delete_memory", JSON.stringify({ p_user: "u", p_id: crypto.randomUUID() }));
    expect(misnamed).toMatchObject({
      status: 404,
      body: {
        code: "PGRST202",
        message: "Could not find the function public.delete_memory(p_id, p_user) in the schema cache",
        hint: "Perhaps you meant to call public.delete_memory(p_user_id, p_id)",
      },
    });
    expect((await post("delete_memory", JSON.stringify({ p_user_id: "u" }))).status).toBe(404);
    expect(
      (await post("delete_memory", JSON.stringify({ p_user_id: "u", p_id: crypto.randomUUID(), p_extra: 1 }))).status,
    ).toBe(404);
  });

  it("answers 400 PGRST102 for a body that is not JSON, or not a JSON object", async () => {
    for (const body of ["{", "{'a': 1}", "[]", "null", "5", '"text"'])
      expect(await post("ping", body)).toMatchObject({ status: 400, body: { code: "PGRST102" } });
  });

  it("answers 400 with Postgres's error for a value the argument's type refuses", async () => {
    const cases: [string, object, string][] = [
      ["delete_memory", { p_user_id: "u", p_id: "not-a-uuid" }, "22P02"],
      ["list_memories", { p_user_id: "u", p_limit: "ten" }, "22P02"],
      ["list_memories", { p_user_id: "u", p_limit: 1.5 }, "22P02"],
      ["list_memories", { p_user_id: "u", p_limit: -1 }, "2201W"],
      ["get_user_context", { p_user_id: "nul\u0000" }, "22P05"],
      ["supersede_memories", { p_user_id: "u", p_old_ids: "not an array", p_new_id: crypto.randomUUID() }, "22P02"],
      ["match_memories", { query_embedding: "[1,2", match_count: 1 }, "22P02"],
      ["match_memories", { query_embedding: vector(0.1, 3), match_count: 1, filter_user_id: "u" }, "22000"],
    ];
    for (const [fn, args, code] of cases) {
      const res = await post(fn, JSON.stringify(args));
      expect({ fn, ...res }).toMatchObject({ fn, status: 400, body: { code, message: expect.any(String) } });
      expect(Object.keys(res.body).sort()).toEqual(["code", "details", "hint", "message"]);
    }
  });

  it("answers a function's own raise with 400 P0001", async () => {
    const args = {
      p_document_id: "b/k",
      p_source: "k",
      p_sequencer: "01",
      p_etag: null,
      p_status: "bogus",
      p_reason: "x",
    };
    expect(await post("record_document_outcome", JSON.stringify(args))).toMatchObject({
      status: 400,
      body: { code: "P0001", message: expect.stringContaining("status must be skipped or failed") },
    });
  });

  it("refuses a wrong or missing service key with 401, before running anything", async () => {
    const headers = { ...HEADERS, apikey: "guess", Authorization: "Bearer guess" };
    expect(await post("ping", "{}", { headers })).toMatchObject({ status: 401, body: { code: "PGRST301" } });
    expect(await post("ping", "{}", { headers: { "Content-Type": "application/json" } })).toMatchObject({
      status: 401,
    });
  });

  it("serves functions only: a table path is 404, a GET 405, a body not declared JSON 415", async () => {
    const table = await standIn(`${STAND_IN_URL}/rest/v1/agent_memories?select=id`, { headers: HEADERS });
    expect(table.status).toBe(404);
    expect((await post("ping", "{}", { method: "GET", body: undefined })).status).toBe(405);
    expect((await post("ping", "{}", { headers: { ...HEADERS, "Content-Type": "text/plain" } })).status).toBe(415);
  });

  it("maps SQLSTATEs to PostgREST's documented statuses", () => {
    expect(
      [
        "23505",
        "23503",
        "23502",
        "22P02",
        "P0001",
        "42883",
        "42501",
        "08006",
        "53300",
        "53400",
        "40001",
        "XX000",
        "P0002",
      ].map(statusOf),
    ).toEqual([409, 409, 400, 400, 400, 404, 403, 503, 503, 500, 500, 500, 500]);
  });
});

describe("PostgREST stand-in through postgrest-js", () => {
  it("reaches the production transport's error path with the function named", async () => {
    const rpc = postgrestOver(db);
    await expect(rpc.call("delete_memory", { p_user_id: "u", p_id: "nope" })).rejects.toThrow(
      /^delete_memory failed: invalid input syntax for type uuid/,
    );
    await expect(rpc.call("no_such_function", {})).rejects.toMatchObject({ cause: { code: "PGRST202" } });
  });
});
