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
 * every key in the account and region, so with `stack` another stack's tagged key is unknown here
 * rather than left to that check: the stack names its keys `<stack>-<client>`, and a key counts
 * only if its name is exactly that for its own client tag (a prefix would take stack `a-b`'s
 * keys for stack `a`).
 */
export function apiKeyDirectory({
  client,
  stack,
  maxAgeMs = 300_000,
  now = Date.now,
}: {
  client?: Pick<APIGatewayClient, "send">;
  stack?: string;
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
        if (stack !== undefined && key.name !== `${stack}-${key.tags.client}`) continue;
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
