import { createMemoriesHandler } from "../../functions/memories";
import { loadConfig } from "../../shared/config";
import { apiEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
beforeAll(async () => {
  harness = await backendsHarness();
}, 60_000);
afterAll(() => harness.close());

const config = loadConfig({ AUTH_MODE: "local" });
const list = (query: Record<string, string> | null, withStore = true) =>
  createMemoriesHandler(() => ({
    config,
    dynamo: harness.dynamo.client,
    ...(withStore ? { store: harness.store } : {}),
  }))(
    {
      ...apiEvent({ method: "GET", resource: "/api/memories", path: "/api/memories", headers: { "x-user-id": "u1" } }),
      queryStringParameters: query,
    },
    context(),
  );
const remove = (id: string) =>
  createMemoriesHandler(() => ({ config, dynamo: harness.dynamo.client, store: harness.store }))(
    apiEvent({
      method: "DELETE",
      resource: "/api/memories/{id}",
      path: `/api/memories/${id}`,
      pathParameters: { id },
      headers: { "x-user-id": "u1" },
    }),
    context(),
  );
const body = (res: unknown) => JSON.parse((res as { body: string }).body);

describe("memories API validation", () => {
  it("rejects a bad limit or filter with a 400 naming it", async () => {
    expect(body(await list({ limit: "0" }))).toMatchObject({ error: { code: "invalid_limit" } });
    expect(body(await list({ limit: "500" }))).toMatchObject({ error: { code: "invalid_limit" } });
    expect(body(await list({ limit: "ten" }))).toMatchObject({ error: { code: "invalid_limit" } });
    expect((await list({ tag: "" }))!.statusCode).toBe(400);
  });

  it("rejects a malformed id and answers 404 for an unknown one", async () => {
    expect(body(await remove("42"))).toMatchObject({ error: { code: "invalid_memory_id" } });
    const missing = await remove("6f9619ff-8b86-4011-b42d-00cf4fc964ff");
    expect(missing!.statusCode).toBe(404);
  });

  it("answers 503 where no store is configured", async () => {
    const res = await list(null, false);
    expect(res!.statusCode).toBe(503);
    expect(body(res).error.code).toBe("memory_unavailable");
  });
});
