import type { APIGatewayClient } from "@aws-sdk/client-api-gateway";

/** A server-to-server client, as its API key's tags describe it. */
export interface ApiKeyClient {
  /** the key's `client` tag: the caller's name */
  client: string;
  /** the key's `trusted` tag is "true": the client may name the user it acts for */
  trusted: boolean;
}

/**
 * The stage's API keys, read from API Gateway (GetApiKeys with values) and kept for five
 * minutes per container, so the authorizer can tell which client a key belongs to and whether
 * it is trusted. API Gateway itself then checks the key against its usage plan. GetApiKeys lists
 * every key in the account and region, so with `namePrefix` (the stack's keys are named
 * `<stack>-<client>`) another stack's tagged key is unknown here rather than left to that check.
 */
export function apiKeyDirectory({
  client,
  namePrefix,
  maxAgeMs = 300_000,
  now = Date.now,
}: {
  client?: Pick<APIGatewayClient, "send">;
  namePrefix?: string;
  maxAgeMs?: number;
  now?: () => number;
} = {}) {
  let cached: { at: number; keys: Promise<Map<string, ApiKeyClient>> } | undefined;
  const load = async () => {
    const { APIGatewayClient, GetApiKeysCommand } = await import("@aws-sdk/client-api-gateway");
    client ??= new APIGatewayClient({});
    const keys = new Map<string, ApiKeyClient>();
    let position: string | undefined;
    do {
      const page = await client.send(new GetApiKeysCommand({ includeValues: true, limit: 500, position }));
      for (const key of page.items ?? []) {
        if (!key.enabled || !key.value || !key.tags?.client) continue;
        if (namePrefix !== undefined && !key.name?.startsWith(namePrefix)) continue;
        keys.set(key.value, { client: key.tags.client, trusted: key.tags.trusted === "true" });
      }
      position = page.position;
    } while (position);
    return keys;
  };
  return async (value: string): Promise<ApiKeyClient | undefined> => {
    if (!cached || now() - cached.at > maxAgeMs) {
      const keys = load();
      cached = { at: now(), keys };
      keys.catch(() => (cached = undefined));
    }
    return (await cached.keys).get(value);
  };
}
