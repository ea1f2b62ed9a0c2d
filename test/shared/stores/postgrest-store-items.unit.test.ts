import { postgrestRpc, supabaseRest } from "../../../shared/stores/postgrest";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { recordingServer, type RecordedRequest, type Reply } from "../../support/recording-server";

// The Agent Server store's lookups over PostgREST: the same SQL functions the SQL transport calls
// (supabase/migrations/011_agent_store_keys.sql), with named arguments.
let reply: (req: RecordedRequest) => Reply = () => ({ status: 200, body: [] });
let server: Awaited<ReturnType<typeof recordingServer>>;
let store: RpcAgentStore;

beforeAll(async () => {
  server = await recordingServer((req) => reply(req));
  store = new RpcAgentStore(postgrestRpc(supabaseRest(server.url, "key")));
});
afterAll(() => server.close());

describe("PostgREST agent store: store items", () => {
  it("agent_store_items: one namespace's item by key, or every namespace's by filter", async () => {
    const row = {
      id: "7d4c1b0e-1111-4a2b-9c3d-000000000001",
      user_id: "u1",
      project_id: null,
      content: "likes teal",
      category: null,
      tags: [],
      metadata: { store_key: "colour" },
      created_at: "2026-03-01T10:00:00+00:00",
      updated_at: "2026-03-01T10:00:00+00:00",
      superseded_by: null,
    };
    reply = () => ({ status: 200, body: [row] });
    const [found] = await store.storeItems({ userId: "u1", projectId: null, key: "colour", limit: 1, offset: 0 });
    expect(found).toMatchObject({
      id: row.id,
      content: "likes teal",
      projectId: null,
      metadata: { store_key: "colour" },
    });
    const keyed = server.requests.at(-1)!;
    expect([keyed.method, keyed.path]).toEqual(["POST", "/rest/v1/rpc/agent_store_items"]);
    expect(keyed.body).toEqual({
      p_user_id: "u1",
      p_project_id: null,
      p_any_project: false,
      p_key: "colour",
      p_filter: null,
      p_limit: 1,
      p_offset: 0,
    });
    await store.storeItems({ userId: "u1", projectId: undefined, filter: { tags: ["a"] }, limit: 10, offset: 200 });
    expect(server.requests.at(-1)!.body).toMatchObject({ p_any_project: true, p_key: null, p_filter: { tags: ["a"] } });
  });

  it("agent_store_projects: the projects, null for none", async () => {
    reply = () => ({ status: 200, body: [null, "work"] });
    expect(await store.storeProjects("u1")).toEqual([null, "work"]);
    expect(server.requests.at(-1)!.path).toBe("/rest/v1/rpc/agent_store_projects");
    expect(server.requests.at(-1)!.body).toEqual({ p_user_id: "u1" });
  });
});
