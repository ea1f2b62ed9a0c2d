import { postgrestRpc, supabaseRest } from "../../../shared/stores/postgrest";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { recordingServer, type RecordedRequest, type Reply } from "../../support/recording-server";

// What the PostgREST transport puts on the wire, over real HTTP: the store's behaviour over it is
// the contract's (agent-store-over-postgrest.integration.test.ts, against the stand-in).
const KEY = "service-role-key";
let reply: (req: RecordedRequest) => Reply = () => ({ status: 200, body: [] });
let server: Awaited<ReturnType<typeof recordingServer>>;
let rpc: ReturnType<typeof postgrestRpc>;

beforeAll(async () => {
  server = await recordingServer((req) => reply(req));
  rpc = postgrestRpc(supabaseRest(`${server.url}/`, KEY));
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("PostgREST transport: requests and responses", () => {
  it("calls a function as POST /rest/v1/rpc/<name>, with the service key and the named arguments as the JSON body", async () => {
    const id = "7d4c1b0e-1111-4a2b-9c3d-000000000001";
    reply = () => ({ status: 200, body: [{ id, created: true }] });
    const store = new RpcAgentStore(rpc);
    expect(
      await store.insertMemory({
        userId: "u1",
        projectId: null,
        content: "likes teal",
        embedding: [0.5, -0.25],
        tags: ["colour"],
        metadata: { title: "colour" },
      }),
    ).toEqual({ id, created: true });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect([req.method, req.path, [...req.query.keys()]]).toEqual(["POST", "/rest/v1/rpc/insert_memory", []]);
    expect(req.headers.apikey).toBe(KEY);
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["content-type"]).toMatch(/^application\/json/);
    expect(req.body).toEqual({
      p_user_id: "u1",
      p_project_id: null,
      p_content: "likes teal",
      p_embedding: "[0.5,-0.25]",
      p_category: null,
      p_tags: ["colour"],
      p_metadata: { title: "colour" },
      p_source_session_id: null,
      p_turn_at: null,
      p_same_similarity: null,
    });
  });

  it("returns the body PostgREST answers with: a value, rows, or null for a void function's 204", async () => {
    reply = () => ({ status: 200, body: "replaced" });
    expect(await rpc.call("replace_document_chunks", {})).toBe("replaced");
    reply = () => ({ status: 200, body: [{ state: "begin", interrupted: 0, reason: null }] });
    expect(await rpc.call("begin_document_attempt", {})).toEqual([{ state: "begin", interrupted: 0, reason: null }]);
    reply = () => ({ status: 204 });
    expect(await rpc.call("record_document_facts", {})).toBeNull();
  });

  it("throws PostgREST's error with the function named, instead of reading it as no rows", async () => {
    reply = () => ({
      status: 404,
      body: {
        code: "PGRST202",
        message: "Could not find the function public.match_memories",
        details: null,
        hint: null,
      },
    });
    const failure = rpc.call("match_memories", { query_embedding: "[1]" });
    await expect(failure).rejects.toThrow(/^match_memories failed: Could not find the function/);
    await expect(failure).rejects.toMatchObject({ cause: { code: "PGRST202" } });
  });
});
