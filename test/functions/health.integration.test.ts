import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CHECK_TIMEOUT_MS, createHealthHandler } from "../../functions/health";
import { createCheckpointTable } from "../../graph/checkpoint";
import { loadConfig } from "../../shared/config";
import type { AgentStore } from "../../shared/stores/agent-store";
import { RpcAgentStore } from "../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../shared/stores/sql-rpc";
import { apiEvent, context } from "../support/events";
import { backendsHarness } from "../support/stack";

let harness: Awaited<ReturnType<typeof backendsHarness>>;
const config = loadConfig({ CHECKPOINT_TABLE: "health-checks" });
beforeAll(async () => {
  harness = await backendsHarness();
  await createCheckpointTable(harness.dynamo.client, config.CHECKPOINT_TABLE);
}, 60_000);
afterAll(() => harness.close());

const check = async (backends: Parameters<typeof createHealthHandler>[0]) => {
  const res = (await createHealthHandler(backends)(
    apiEvent({ method: "GET", resource: "/api/health/deep", path: "/api/health/deep" }),
    context(),
  ))!;
  return { status: res.statusCode, body: JSON.parse(res.body) };
};

describe("GET /api/health/deep", () => {
  it("answers 200 with each backend's latency when DynamoDB and Supabase answer", async () => {
    const res = await check(async () => ({
      config,
      dynamo: harness.dynamo.client,
      store: new RpcAgentStore(sqlRpc(harness.postgres)),
    }));
    expect(res).toMatchObject({
      status: 200,
      body: { status: "ok", checks: { dynamodb: { ok: true }, supabase: { ok: true } } },
    });
  });

  it("answers 503 naming DynamoDB when its table is not there", async () => {
    const res = await check(async () => ({
      config: { ...config, CHECKPOINT_TABLE: "no-such-table" },
      dynamo: harness.dynamo.client,
      store: new RpcAgentStore(sqlRpc(harness.postgres)),
    }));
    expect(res.status).toBe(503);
    expect(res.body.checks.dynamodb).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not found|non-existent/i),
    });
    expect(res.body.checks.supabase.ok).toBe(true);
  });

  it("answers 503 naming Supabase when it cannot be reached, and never hangs on it", async () => {
    const unreachable = { ping: () => new Promise<void>(() => {}) } as unknown as AgentStore;
    // The check's own clock is faked: the test sees the timeout fire without sitting through it.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const answer = check(async () => ({ config, dynamo: harness.dynamo.client, store: unreachable }));
    await vi.advanceTimersByTimeAsync(CHECK_TIMEOUT_MS).finally(() => vi.useRealTimers());
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.body.checks.supabase).toMatchObject({ ok: false, error: expect.stringMatching(/no answer within/) });
  });

  it("reports Supabase as not configured where there is none, and DynamoDB down when unreachable", async () => {
    const nowhere = new DynamoDBClient({
      endpoint: "http://127.0.0.1:9",
      region: "local",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
      maxAttempts: 1,
    });
    const res = await check(async () => ({ config, dynamo: nowhere }));
    expect(res).toMatchObject({
      status: 503,
      body: { checks: { dynamodb: { ok: false }, supabase: "not configured" } },
    });
  });
});
