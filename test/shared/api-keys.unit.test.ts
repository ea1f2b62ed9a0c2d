import type { APIGatewayClient } from "@aws-sdk/client-api-gateway";
import { apiKeyDirectory } from "../../shared/api-keys";

// GetApiKeys pages as the SDK returns them (the REST API's documented `items` and `position`).
const pages = [
  {
    items: [
      { id: "a", name: "billing", value: "v-billing", enabled: true, tags: { client: "billing", trusted: "true" } },
      { id: "b", name: "old", value: "v-old", enabled: false, tags: { client: "old", trusted: "true" } },
      { id: "c", name: "console", value: "v-console", enabled: true },
    ],
    position: "p2",
  },
  { items: [{ id: "d", name: "reports", value: "v-reports", enabled: true, tags: { client: "reports" } }] },
];

function fakeApiGateway() {
  const calls: Array<Record<string, unknown>> = [];
  const client = {
    send: async (command: { input: Record<string, unknown> }) => {
      calls.push(command.input);
      return command.input.position === "p2" ? pages[1] : pages[0];
    },
  } as unknown as Pick<APIGatewayClient, "send">;
  return { client, calls };
}

describe("API key directory", () => {
  it("knows only keys named <stack>-<client> when given its stack: another stack's tagged key is unknown", async () => {
    const key = (name: string, value: string) => ({
      name,
      value,
      enabled: true,
      tags: { client: "billing", trusted: "true" },
    });
    const client = {
      send: async () => ({
        items: [
          key("AgentBackend-billing", "v-own"),
          key("AgentBackend-staging-billing", "v-staging"),
          key("billing", "v-bare"),
        ],
      }),
    } as unknown as Pick<APIGatewayClient, "send">;
    const own = apiKeyDirectory({ client, stack: "AgentBackend" });
    expect(await own("v-own")).toEqual({ client: "billing", trusted: true });
    expect(await own("v-staging")).toBeUndefined();
    expect(await own("v-bare")).toBeUndefined();
    expect(await apiKeyDirectory({ client, stack: "AgentBackend-staging" })("v-staging")).toEqual({
      client: "billing",
      trusted: true,
    });
  });

  it("knows enabled keys tagged with a client, across pages, asking for their values", async () => {
    const { client, calls } = fakeApiGateway();
    const lookup = apiKeyDirectory({ client });
    expect(await lookup("v-billing")).toEqual({ client: "billing", trusted: true });
    expect(await lookup("v-reports")).toEqual({ client: "reports", trusted: false });
    expect(await lookup("v-old")).toBeUndefined();
    expect(await lookup("v-console")).toBeUndefined();
    expect(await lookup("v-unknown")).toBeUndefined();
    expect(calls).toEqual([
      { includeValues: true, limit: 500, position: undefined },
      { includeValues: true, limit: 500, position: "p2" },
    ]);
  });

  it("reads the keys again after five minutes, and after a failed read", async () => {
    const { client, calls } = fakeApiGateway();
    let t = 0;
    let fail = true;
    const flaky = {
      send: async (command: never) => {
        if (fail) throw new Error("throttled");
        return client.send(command);
      },
    } as unknown as Pick<APIGatewayClient, "send">;
    const lookup = apiKeyDirectory({ client: flaky, now: () => t });
    await expect(lookup("v-billing")).rejects.toThrow("throttled");
    fail = false;
    expect(await lookup("v-billing")).toBeDefined();
    t = 299_000;
    await lookup("v-billing");
    expect(calls).toHaveLength(2);
    t = 301_000;
    await lookup("v-billing");
    expect(calls).toHaveLength(4);
  });
});
